// Every room event the hub does not take is counted by why, and logged with its event id — the
// first few per sender and reason, then every hundredth, so a flood cannot drown the log.
import type { RawEvent } from './wire';
import type { Log } from '../../protocol/hubLog';

/** Why an event was not taken; the counts are shown in the remote status. */
export type DropReason =
  | 'not_allowed'
  | 'malformed'
  | 'forged_node'
  | 'bad_signature'
  | 'node_claim_refused'
  | 'not_a_recipient'
  | 'not_for_this_node'
  | 'person_unnamed'
  | 'meaningless'
  /** A hub account's event from a device its node did not sign for (E2EE rooms). */
  | 'unverified_device'
  /** A bus event in plaintext in an encrypted room. */
  | 'not_encrypted'
  /** Its room key never arrived. */
  | 'undecryptable';

const LOGGED_FIRST = 5;
const LOG_EVERY = 100;

export class Drops {
  private readonly counts = new Map<DropReason, number>();
  private readonly perSender = new Map<string, number>();

  constructor(private readonly log: Log) {}

  note(reason: DropReason, ev: Pick<RawEvent, 'event_id' | 'sender' | 'type'>, why: string): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    const key = `${reason}\n${ev.sender}`;
    const n = (this.perSender.get(key) ?? 0) + 1;
    this.perSender.set(key, n);
    if (n <= LOGGED_FIRST || n % LOG_EVERY === 0) {
      this.log(
        `dropped ${ev.type} ${ev.event_id} from ${ev.sender} (${reason}${n > LOGGED_FIRST ? `, ${n} so far` : ''}): ${why}`,
        'warn',
      );
    }
  }

  summary(): Partial<Record<DropReason, number>> {
    return Object.fromEntries(this.counts) as Partial<Record<DropReason, number>>;
  }
}

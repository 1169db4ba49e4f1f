// What the hub remembers of recent sends so one instruction is stored once (G6): sends in flight
// by idempotency key (a racing retry waits for the first), and body fingerprints for the
// probable-duplicate window. In memory; rebuilt from the open messages at start.
import type { BusState, StoredMessage } from '../bus/model';
import { RecentSends, type Fingerprint } from '../bus/recentSends';
import type { SendResult } from '../../protocol/views';
import type { DuplicateWhy } from '../bus/decide';
import { Backfill } from './backfill';

export class SendMemory {
  private readonly remembered = new RecentSends();
  /** The open messages being put in after a restart (seed). */
  private seeding?: Backfill;
  private readonly inflight = new Map<string, Promise<SendResult>>();
  /** Sends being committed, by id: their commits, which `landed` reads as stored or refused. */
  private readonly landing = new Map<string, Promise<unknown>>();

  constructor(private readonly windowMs: number) {}

  /**
   * Fingerprints of the open messages still inside the window (after a restart), put in by a
   * backfill after start: a fingerprint reads its message's body back from the checkpoint, and
   * 100 000 of them were a quarter of a full store's start. A send before it is through finishes
   * it. Each is taken at its own moment: what a hub started then would hold.
   */
  seed(
    ids: Iterable<string>,
    state: () => BusState,
    now: () => number,
    skipped: (id: string, e: Error) => void,
  ): Backfill {
    this.seeding = new Backfill(
      ids,
      (id) => {
        const hot = state().hot[id];
        if (hot && now() - hot.message.sentAt < this.windowMs) this.remembered.add(hot.message);
      },
      skipped,
    );
    return this.seeding;
  }

  get recent(): RecentSends {
    this.seeding?.finish();
    return this.remembered;
  }

  /** Set before the send is committed, so a racing twin already sees it; returns how to forget it. */
  track(m: StoredMessage, fingerprint?: Fingerprint): () => void {
    return this.recent.add(m, fingerprint);
  }

  /**
   * Holds the commit of a new message until it has `settled`, so a probable duplicate racing it
   * can wait for it. The commit itself, not promises derived from it: every send paid for two.
   */
  committing(id: string, commit: Promise<unknown>): void {
    this.landing.set(id, commit);
  }

  /** The commit of `id` has settled (stored or refused). */
  settled(id: string): void {
    this.landing.delete(id);
  }

  /** Whether the send `id` is stored: waits while it is being committed. */
  landed(id: string): Promise<boolean> {
    return (
      this.landing.get(id)?.then(
        () => true,
        () => false,
      ) ?? Promise.resolve(true)
    );
  }

  /** Runs the send once per (sender, key) at a time: a retry racing the first gets the first's answer, marked. */
  once(sender: string, key: string | undefined, work: () => Promise<SendResult>): Promise<SendResult> {
    if (!key) return work();
    const keyed = `${sender}\n${key}`;
    const racing = this.inflight.get(keyed);
    if (racing) return racing.then((first) => asDuplicate(first, 'idempotency_key'));
    const p = work();
    this.inflight.set(keyed, p);
    p.finally(() => this.inflight.delete(keyed)).catch(() => undefined);
    return p;
  }

  /** Forgets fingerprints past the window, oldest first: O(1) per send amortised. */
  prune(now: number): void {
    this.recent.prune((m) => now - m.sentAt > this.windowMs);
  }
}

export function asDuplicate(first: SendResult, why: DuplicateWhy): SendResult {
  const note =
    why === 'idempotency_key'
      ? 'This idempotency key was already used: nothing new was sent; this is the first message.'
      : why === 'resent'
        ? 'Stored once: the hub went away before answering this call, the bridge sent it again, and the first attempt had been stored. This is that message.'
        : 'The same body went to the same recipients moments ago: treated as a probable duplicate, nothing new was sent. Pass insist: true if you really mean to send it again.';
  return { ...first, duplicate: { why, note } };
}

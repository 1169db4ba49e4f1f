// Sends the persisted outbox to the room, strictly in order (FIFO per sender→recipient), one
// event at a time. Each entry's txnId was journaled with the send itself, so a retry — after a
// network error, a 429, an outage or a hub restart — is the same idempotent PUT. Custom content
// gets no retry from the SDK, which is why this loop exists.
import type { OutboxEntry } from '../bus/model';
import { messageTxnId } from '../bus/relay';
import type { Hub } from '../hub';
import type { RelayOutcome } from '../../protocol/views';
import { classify, type Homeserver } from './homeserver';
import { outboxEvent } from './wire';

const MAX_BACKOFF_MS = 2000;

export interface OutboxHooks {
  log: (line: string) => void;
  /** A request failed (`refused`: the homeserver rejects the token or the room) or succeeded. */
  onTrouble: (why: string, refused: boolean) => void;
  onSuccess: () => void;
}

export class Outbox {
  private wake?: () => void;
  private stopped = false;
  private failures = 0;
  lastError?: string;
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly refusedTxns = new Map<string, string>();
  /** Taken by the homeserver, its `relayed` record still being written: not sent again meanwhile. */
  private readonly accepted = new Map<string, { eventId: string; at: number }>();

  constructor(
    private readonly hub: Hub,
    private readonly hs: Homeserver,
    private readonly room: string,
    private readonly hooks: OutboxHooks,
  ) {}

  get pending(): number {
    return Object.keys(this.hub.state.relay?.outbox ?? {}).length;
  }

  /** Something changed (a new entry, the homeserver is back): try now instead of after the backoff. */
  poke(): void {
    this.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  private next(): OutboxEntry | undefined {
    let first: OutboxEntry | undefined;
    for (const e of Object.values(this.hub.state.relay?.outbox ?? {})) {
      if (!this.accepted.has(e.txnId) && (!first || e.order < first.order)) first = e;
    }
    return first;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === Infinity ? undefined : setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  async run(): Promise<void> {
    while (!this.stopped) {
      const entry = this.next();
      if (!entry) {
        await this.sleep(Infinity);
        continue;
      }
      const { type, content } = outboxEvent(entry, this.hub.node);
      try {
        const eventId = await this.hs.send(this.room, type, entry.txnId, content);
        this.failures = 0;
        this.lastError = undefined;
        this.hooks.onSuccess();
        this.record(entry.txnId, eventId);
      } catch (e) {
        if (this.stopped) return;
        const f = classify(e);
        if (f.kind === 'permanent') {
          const reason = `the homeserver refused the Matrix event for good (${f.why}); it was not delivered`;
          this.hooks.log(`outbox ${entry.txnId}: ${reason}`);
          this.refusedTxns.set(entry.txnId, reason);
          await this.hub.applyRemote([{ type: 'relay-failed', txnId: entry.txnId, reason, at: Date.now() }])
            .catch((err) => this.hooks.log(`could not record the refusal of ${entry.txnId}: ${(err as Error).message}`));
          this.notify(entry.txnId);
          continue;
        }
        this.lastError = f.why;
        this.hooks.onTrouble(f.why, f.kind === 'refused');
        const backoff = f.kind === 'retry' && f.afterMs !== undefined ? f.afterMs : Math.min(100 * 2 ** this.failures, MAX_BACKOFF_MS);
        this.failures++;
        await this.sleep(f.kind === 'refused' ? 10_000 : backoff);
      }
    }
  }

  /**
   * Journals that the homeserver took the event, while the next entry goes out: order is kept by
   * the PUTs, not by this write. If the write is lost (a crash, a full disk), the entry is PUT
   * again with its txnId and the homeserver answers with the same event id — or, past its dedupe
   * window, the receiving hubs drop the copy by message id.
   */
  private record(txnId: string, eventId: string): void {
    const at = Date.now();
    this.accepted.set(txnId, { eventId, at });
    this.notify(txnId);
    this.hub.applyRemote([{ type: 'relayed', txnId, eventId, at }])
      .catch((e) => this.hooks.log(`could not record that ${txnId} reached the homeserver (it is sent again): ${(e as Error).message}`))
      .finally(() => {
        this.accepted.delete(txnId);
        this.poke();
      });
  }

  private notify(txnId: string): void {
    for (const w of this.waiters.get(txnId) ?? []) w();
    this.waiters.delete(txnId);
  }

  /** Where a message's Matrix event is, waiting up to `waitMs` for the homeserver to take it. */
  async whereIs(messageId: string, waitMs: number): Promise<RelayOutcome> {
    const txnId = messageTxnId(messageId);
    if (this.hub.state.relay?.outbox[txnId] && !this.accepted.has(txnId) && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const set = this.waiters.get(txnId) ?? new Set();
        this.waiters.set(txnId, set);
        const done = () => {
          clearTimeout(timer);
          set.delete(done);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        set.add(done);
      });
    }
    const relayed = this.hub.state.hot[messageId]?.relayed ?? this.accepted.get(txnId);
    if (relayed) return { state: 'on_homeserver', event_id: relayed.eventId, at: relayed.at };
    const refused = this.refusedTxns.get(txnId);
    if (refused) return { state: 'refused', reason: refused };
    const ahead = this.pending - 1;
    return {
      state: 'in_outbox',
      note: `Stored durably, not on the homeserver yet${ahead > 0 ? ` (${ahead} earlier outbox entries go first)` : ''}; it is retried with the same txnId until it is, across restarts.`,
      last_error: this.lastError,
    };
  }
}

// Sends the persisted outbox to the room, strictly in order (FIFO per sender→recipient), one
// event at a time — but when a backlog waits, the next run of entries goes out as one batch
// event, so a backlog drains at up to `batch` entries per homeserver round trip. Each entry's
// txnId was journaled with the send itself, and a batch's members are journaled before its first
// PUT, so a retry — after a network error, a 429, an outage or a hub restart — is the same
// idempotent PUT of the same bytes. Custom content gets no retry from the SDK, hence this loop.
import type { OutboxEntry, RelayState } from '../bus/model';
import { batchOf } from '../bus/reduce';
import { messageTxnId } from '../bus/relay';
import { destinationOf } from '../bus/links';
import type { Hub } from '../hub';
import type { RelayOutcome } from '../../protocol/views';
import { classify } from './homeserver';
import { personUser } from './person';
import { BATCH_BYTES, batchCost, batchEvent, eventTypeOf, outboxEvent, type Signer } from './wire';
import type { Log } from '../../protocol/hubLog';

const MAX_BACKOFF_MS = 2000;
/**
 * Entries taken by the homeserver alone whose `relayed` records are still being written, at most:
 * so after a crash, only the oldest few entries can have been PUT alone without a record, and
 * those go alone again (same txnId, deduped by the homeserver) instead of inside a batch.
 */
const ALONE_IN_FLIGHT = 4;

/** Puts one event in the room, idempotent by txnId (encrypted first in an encrypted room); its event id. */
export type RoomSend = (type: string, txnId: string, content: Record<string, unknown>) => Promise<string>;

export interface OutboxHooks {
  log: Log;
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
  /**
   * Entries that go out alone, never in a batch: any that may have been PUT alone already (a batch
   * would be a second copy in the room under another txnId), and the members of a refused batch.
   */
  private readonly alone = new Set<string>();

  constructor(
    private readonly hub: Hub,
    private readonly put: RoomSend,
    private readonly batch: number,
    private readonly signer: Signer | undefined,
    private readonly hooks: OutboxHooks,
    /** A batch's budget: smaller in an encrypted room, whose ciphertext is base64 (×4/3). */
    private readonly batchBytes = BATCH_BYTES,
  ) {
    // Before a restart, the oldest entries may have been PUT alone with their records lost.
    const relay = hub.state.relay;
    const loose = Object.values(relay?.outbox ?? {})
      .filter((e) => !batchOf(relay!, e.txnId))
      .sort((a, b) => a.order - b.order);
    for (const e of loose.slice(0, ALONE_IN_FLIGHT + 1)) this.alone.add(e.txnId);
  }

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

  /** What goes out next: a batch already fixed in the journal, or the oldest entry not yet taken. */
  private next(): { txnId: string; entries: OutboxEntry[] } | undefined {
    const relay = this.hub.state.relay;
    let first: OutboxEntry | undefined;
    const local = this.hub.links.names();
    for (const e of Object.values(relay?.outbox ?? {})) {
      if (local.size && local.has(destinationOf(e) ?? '')) continue; // a linked repository's: hub/link/ delivers it
      if (!this.accepted.has(e.txnId) && (!first || e.order < first.order)) first = e;
    }
    if (!first || !relay) return undefined;
    const batch = batchOf(relay, first.txnId);
    if (batch) return { txnId: batch, entries: relay.batches![batch].map((t) => relay.outbox[t]).filter((e) => !!e) };
    return { txnId: first.txnId, entries: [first] };
  }

  /** What a person reads goes alone: a handoff to them is what they reply to, react to and are
   * mentioned in; a receipt for their handoff relates to their message. */
  private static batchable(e: OutboxEntry): boolean {
    const item = e.item;
    return item.kind === 'message' ? !item.message.recipients.some((r) => personUser(r)) : !personUser(item.sender);
  }

  /** The run of waiting entries from `first` on that fits one event, oldest first. */
  private runFrom(relay: RelayState, first: OutboxEntry): OutboxEntry[] {
    const local = this.hub.links.names();
    const waiting = Object.values(relay.outbox)
      .filter((e) => e.order >= first.order && !this.accepted.has(e.txnId) && !local.has(destinationOf(e) ?? ''))
      .sort((a, b) => a.order - b.order);
    const out: OutboxEntry[] = [];
    let bytes = 0;
    for (const e of waiting) {
      if (
        out.length >= this.batch ||
        !Outbox.batchable(e) ||
        this.alone.has(e.txnId) ||
        batchOf(relay, e.txnId) ||
        eventTypeOf(e) !== eventTypeOf(first)
      )
        break;
      bytes += batchCost(e, this.hub.node);
      if (out.length > 0 && bytes > this.batchBytes) break;
      out.push(e);
    }
    return out;
  }

  /** Fixes a backlog's next run as one batch in the journal, before it is sent. */
  private async batchUp(next: {
    txnId: string;
    entries: OutboxEntry[];
  }): Promise<{ txnId: string; entries: OutboxEntry[] }> {
    const relay = this.hub.state.relay;
    const [first] = next.entries;
    if (this.batch < 2 || next.entries.length > 1 || !relay || !Outbox.batchable(first) || this.alone.has(first.txnId))
      return next;
    const run = this.runFrom(relay, first);
    if (run.length < 2) return next;
    const txnId = `batch.${first.txnId}`;
    await this.hub.applyRemote([{ type: 'batched', txnId, members: run.map((e) => e.txnId) }]);
    return this.next() ?? next;
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
      let next = this.next();
      if (!next) {
        await this.sleep(Infinity);
        continue;
      }
      const members = () => next!.entries.map((e) => e.txnId);
      try {
        next = await this.batchUp(next);
        if (!next.txnId.startsWith('batch.')) {
          if ([...this.accepted.keys()].filter((t) => this.alone.has(t)).length >= ALONE_IN_FLIGHT) {
            await this.sleep(Infinity); // until a record lands (it pokes)
            continue;
          }
          this.alone.add(next.txnId); // from its first PUT on, it only ever goes alone
        }
        const { type, content } = next.txnId.startsWith('batch.')
          ? batchEvent(next.entries, this.hub.node, this.signer)
          : outboxEvent(next.entries[0], this.hub.node, this.signer);
        const eventId = await this.put(type, next.txnId, content);
        this.failures = 0;
        this.lastError = undefined;
        this.hooks.onSuccess();
        this.record(next.txnId, members(), eventId);
      } catch (e) {
        if (this.stopped) return;
        const f = classify(e);
        if (f.kind === 'permanent' && next.txnId.startsWith('batch.')) {
          // Refused as a whole (too large?): nothing is lost, its members go out one by one.
          this.hooks.log(
            `outbox ${next.txnId}: the homeserver refused the batch of ${next.entries.length} (${f.why}); sending them one by one`,
          );
          for (const t of members()) this.alone.add(t);
          await this.hub
            .applyRemote([{ type: 'unbatched', txnId: next.txnId }])
            .catch((err) =>
              this.hooks.log(`could not record the split of ${next!.txnId}: ${(err as Error).message}`, 'error'),
            );
          continue;
        }
        if (f.kind === 'permanent') {
          const reason = `the homeserver refused the Matrix event for good (${f.why}); it was not delivered`;
          this.hooks.log(`outbox ${next.txnId}: ${reason}`, 'warn');
          for (const t of members()) this.refusedTxns.set(t, reason);
          await this.hub
            .applyRemote([{ type: 'relay-failed', txnId: next.txnId, reason, at: Date.now() }])
            .catch((err) =>
              this.hooks.log(`could not record the refusal of ${next!.txnId}: ${(err as Error).message}`, 'error'),
            );
          for (const t of members()) this.notify(t);
          continue;
        }
        this.lastError = f.why;
        this.hooks.onTrouble(f.why, f.kind === 'refused');
        const backoff =
          f.kind === 'retry' && f.afterMs !== undefined
            ? f.afterMs
            : Math.min(100 * 2 ** this.failures, MAX_BACKOFF_MS);
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
  private record(txnId: string, members: string[], eventId: string): void {
    const at = Date.now();
    for (const t of members) this.accepted.set(t, { eventId, at });
    this.hub
      .applyRemote([{ type: 'relayed', txnId, eventId, at }])
      .catch((e) =>
        this.hooks.log(
          `could not record that ${txnId} reached the homeserver (it is sent again): ${(e as Error).message}`,
        ),
      )
      .finally(() => {
        // A sender told `on_homeserver` then finds the handoff relayed in every view of the ledger.
        for (const t of members) this.notify(t);
        for (const t of members) {
          this.accepted.delete(t);
          if (!this.hub.state.relay?.outbox[t]) this.alone.delete(t); // recorded: it will not be sent again
        }
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
    // Still in the outbox: not taken yet, or taken and its record not written yet (waits for that too).
    if (this.hub.state.relay?.outbox[txnId] && waitMs > 0) {
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

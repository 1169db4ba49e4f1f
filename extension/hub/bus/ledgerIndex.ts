// The bus summary every change notification carries — open, pending and awaiting-ACK counts,
// each identity's unacked count, what is overdue — kept as the journal moves instead of scanned
// from the open mail once per change. Overdue is the one part that moves with the clock alone: the
// awaiting handoffs are ordered by SLA deadline, and advancing the clock moves those whose deadline
// it passed. Plain data in, plain answers out: the hub only tells it what changed.
import { sharedList } from './compact';
import { ledgerFacts } from './ledger';
import type { BusState, HotMessage, StoredMessage } from './model';
import { SeqList } from './seqList';
import { SortedIds } from './sortedIds';
import type { OverdueSummary } from '../../protocol/views';

const PENDING = 1;
const AWAITING = 2;
const DEAD_LETTERED = 4;

/**
 * What the summary counted one open message as, at its last change: bits, and who still owed an
 * ACK. Held once per distinct value — most open mail is counted alike — so a message's row is a
 * map slot pointing at a shared value; what never changes (seq, times, sender) is read from the
 * message itself.
 */
interface Counted {
  readonly flags: number;
  /** Recipients whose ACK it still waits for. */
  readonly unacked: string[];
}

/** Shared list of who owes an ACK (compact.ts holds each list once) → a value per flags. */
const counted = new Map<string[], Counted[]>();
const MAX_COUNTED = 1024;

function countedOf(hot: HotMessage): Counted {
  const facts = ledgerFacts(hot);
  const flags =
    (facts.pending ? PENDING : 0) | (facts.awaitingAck ? AWAITING : 0) | (facts.deadLettered ? DEAD_LETTERED : 0);
  const unacked = sharedList(facts.owing ?? []);
  let byFlags = counted.get(unacked);
  if (!byFlags) {
    if (counted.size >= MAX_COUNTED) counted.clear(); // names come and go; a dropped value is made again
    counted.set(unacked, (byFlags = []));
  }
  return (byFlags[flags] ??= Object.freeze({ flags, unacked }));
}

/** The facts of a message that never change, as the indexes key it. */
type Facts = Pick<StoredMessage, 'seq' | 'sentAt' | 'slaMs' | 'from'>;
const dueAt = (m: Facts) => m.sentAt + m.slaMs;
const isPendingRow = (c: Counted) => (c.flags & PENDING) !== 0;
const isAwaitingRow = (c: Counted) => (c.flags & AWAITING) !== 0;
const isDeadLetteredRow = (c: Counted) => (c.flags & DEAD_LETTERED) !== 0;

/** The ids of the first `k` entries, read no further. */
function firstIds(entries: Iterable<{ id: string }>, k: number): string[] {
  const out: string[] = [];
  for (const e of entries) {
    if (out.length >= k) break;
    out.push(e.id);
  }
  return out;
}

export class LedgerIndex {
  private readonly rows = new Map<string, Counted>();
  private pendingCount = 0;
  private awaitingCount = 0;
  private readonly unackedBy = new Map<string, number>();
  /** Each sender's pending handoffs: its `pending` tool costs its own ledger, not the hub's open mail. */
  private readonly pendingBy = new Map<string, SeqList>();
  /** Every open handoff in seq order: two array slots each, where a sorted block of times held three. */
  private readonly bySeq = new SeqList();
  private readonly pendingBySent = new SortedIds();
  private readonly awaitingByDue = new SortedIds();
  /** Overdue or dead-lettered as of `clock`, oldest sent first. */
  private readonly attention = new SortedIds();
  private clock = -Infinity;

  static of(state: BusState): LedgerIndex {
    const index = new LedgerIndex();
    index.note(state, Object.keys(state.hot));
    return index;
  }

  /** Follows the journal: each message's row again, from its state now. */
  note(state: BusState, ids: Iterable<string>): void {
    for (const id of ids) {
      const hot = state.hot[id];
      const old = this.rows.get(id);
      if (old && !hot) throw new Error(`the ledger index lost ${id}: a message leaves the hot set through forget()`);
      if (!hot) continue;
      if (old) this.drop(id, hot.message, old);
      this.keep(id, hot.message, countedOf(hot));
    }
  }

  /** Messages archived at a checkpoint left the hot set with no event: their rows go. */
  forget(archived: readonly (Facts & Pick<StoredMessage, 'id'>)[]): void {
    for (const m of archived) {
      const old = this.rows.get(m.id);
      if (old) this.drop(m.id, m, old);
    }
  }

  private keep(id: string, m: Facts, c: Counted): void {
    this.rows.set(id, c);
    this.bySeq.add(id, m.seq);
    if (isPendingRow(c)) {
      this.pendingCount++;
      this.pendingBySent.add(id, m.sentAt, m.seq);
      let mine = this.pendingBy.get(m.from);
      if (!mine) this.pendingBy.set(m.from, (mine = new SeqList()));
      mine.add(id, m.seq);
    }
    if (isAwaitingRow(c)) {
      this.awaitingCount++;
      this.awaitingByDue.add(id, dueAt(m), m.seq);
    }
    if (this.needsAttention(m, c)) this.attention.add(id, m.sentAt, m.seq);
    for (const who of c.unacked) this.unackedBy.set(who, (this.unackedBy.get(who) ?? 0) + 1);
  }

  private drop(id: string, m: Facts, c: Counted): void {
    this.rows.delete(id);
    this.bySeq.delete(id, m.seq);
    if (isPendingRow(c)) {
      this.pendingCount--;
      this.pendingBySent.delete(m.sentAt, m.seq);
      const mine = this.pendingBy.get(m.from)!;
      mine.delete(id, m.seq);
      if (mine.size === 0) this.pendingBy.delete(m.from);
    }
    if (isAwaitingRow(c)) {
      this.awaitingCount--;
      this.awaitingByDue.delete(dueAt(m), m.seq);
    }
    if (this.needsAttention(m, c)) this.attention.delete(m.sentAt, m.seq);
    for (const who of c.unacked) this.unackedBy.set(who, this.unackedBy.get(who)! - 1);
  }

  /** As ledger's overdue() says, at `clock`: dead-lettered, or past its SLA with an ACK still owed. */
  private needsAttention(m: Facts, c: Counted): boolean {
    return isDeadLetteredRow(c) || (isAwaitingRow(c) && this.clock > dueAt(m));
  }

  /** Moves the clock: handoffs whose deadline it passed (or, if it went back, un-passed) change sides. */
  private at(state: BusState, now: number): void {
    if (now === this.clock) return;
    const [from, to] = now > this.clock ? [this.clock, now] : [now, this.clock];
    const crossed: { id: string; m: Facts; c: Counted }[] = [];
    for (const e of this.awaitingByDue.from(from)) {
      if (e.at >= to) break;
      crossed.push({ id: e.id, m: state.hot[e.id].message, c: this.rows.get(e.id)! });
    }
    // Drop with the old clock, keep with the new: each crossed row moves in or out of attention.
    for (const x of crossed)
      if (!isDeadLetteredRow(x.c) && this.needsAttention(x.m, x.c)) this.attention.delete(x.m.sentAt, x.m.seq);
    this.clock = now;
    for (const x of crossed)
      if (!isDeadLetteredRow(x.c) && this.needsAttention(x.m, x.c)) this.attention.add(x.id, x.m.sentAt, x.m.seq);
  }

  counts(): { open: number; pending: number; awaitingAck: number } {
    return { open: this.rows.size, pending: this.pendingCount, awaitingAck: this.awaitingCount };
  }

  /** How many open handoffs wait for the identity's ACK (coverage's unacked). */
  unacked(identity: string): number {
    return this.unackedBy.get(identity) ?? 0;
  }

  /** The same as ledger's overdue(state, now, cap), without looking at the open mail. */
  overdue(state: BusState, now: number, cap: number): OverdueSummary {
    this.at(state, now);
    const ids: string[] = [];
    for (const e of this.attention.from()) {
      if (ids.length >= cap) break;
      ids.push(e.id);
    }
    return { count: this.attention.size, oldestSentAt: this.attention.first()?.at, ids };
  }

  /** Handoffs still owed an ACK whose SLA deadline fell in [from, to): their rows turned overdue with no event. */
  slaPassed(from: number, to: number): string[] {
    const out: string[] = [];
    for (const e of this.awaitingByDue.from(from)) {
      if (e.at >= to) break;
      out.push(e.id);
    }
    return out;
  }

  /** The newest `k` open handoffs, newest first. */
  newest(k: number): string[] {
    const out: string[] = [];
    for (const [id] of this.bySeq.newest()) {
      if (out.length >= k) break;
      out.push(id);
    }
    return out;
  }

  /** The ids of the sender's pending handoffs, in no order. */
  pendingFrom(from: string): string[] {
    return [...(this.pendingBy.get(from)?.ids() ?? [])];
  }

  /** The oldest `k` pending handoffs, oldest sent first. */
  oldestPending(k: number): string[] {
    return firstIds(this.pendingBySent.from(), k);
  }
}

// The bus summary every change notification carries — open, pending and awaiting-ACK counts,
// each identity's unacked count, what is overdue — kept as the journal moves instead of scanned
// from the open mail once per change. Overdue is the one part that moves with the clock alone: the
// awaiting handoffs are ordered by SLA deadline, and advancing the clock moves those whose deadline
// it passed. Plain data in, plain answers out: the hub only tells it what changed.
import { sharedList } from './compact';
import { awaitingAck, isAwaitingAck, isPending } from './ledger';
import type { BusState, HotMessage } from './model';
import { SeqList } from './seqList';
import { SortedIds } from './sortedIds';
import type { OverdueSummary } from '../../protocol/views';

const PENDING = 1;
const AWAITING = 2;
const DEAD_LETTERED = 4;

/**
 * What the summary counted one open message as, at its last change. The message itself, not
 * copies of its seq and times (they never change, and a copied time is a boxed number per row);
 * what may change, as bits.
 */
class Row {
  constructor(
    readonly hot: HotMessage,
    readonly flags: number,
    /** Recipients whose ACK it still waits for. */
    readonly unacked: string[],
  ) {}

  get seq(): number {
    return this.hot.message.seq;
  }

  get sentAt(): number {
    return this.hot.message.sentAt;
  }

  get dueAt(): number {
    return this.hot.message.sentAt + this.hot.message.slaMs;
  }

  get pending(): boolean {
    return (this.flags & PENDING) !== 0;
  }

  get awaiting(): boolean {
    return (this.flags & AWAITING) !== 0;
  }

  get deadLettered(): boolean {
    return (this.flags & DEAD_LETTERED) !== 0;
  }
}

function rowOf(hot: HotMessage): Row {
  const ds = Object.values(hot.deliveries);
  const asked = hot.message.requiresAck && !hot.resolution;
  const flags = (isPending(hot) ? PENDING : 0) | (isAwaitingAck(hot) ? AWAITING : 0) | (!hot.resolution && ds.some((d) => d.state === 'failed') ? DEAD_LETTERED : 0);
  return new Row(hot, flags, sharedList(asked ? ds.filter(awaitingAck).map((d) => d.recipient) : []));
}

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
  private readonly rows = new Map<string, Row>();
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

  /** Follows the journal (and archiving): each message's row again, from its state now (gone if not hot). */
  note(state: BusState, ids: Iterable<string>): void {
    for (const id of ids) {
      const old = this.rows.get(id);
      if (old) this.drop(id, old);
      const hot = state.hot[id];
      if (hot) this.keep(id, rowOf(hot));
    }
  }

  private keep(id: string, r: Row): void {
    this.rows.set(id, r);
    this.bySeq.add(id, r.seq);
    if (r.pending) {
      this.pendingCount++;
      this.pendingBySent.add(id, r.sentAt, r.seq);
      const from = r.hot.message.from;
      let mine = this.pendingBy.get(from);
      if (!mine) this.pendingBy.set(from, (mine = new SeqList()));
      mine.add(id, r.seq);
    }
    if (r.awaiting) {
      this.awaitingCount++;
      this.awaitingByDue.add(id, r.dueAt, r.seq);
    }
    if (this.needsAttention(r)) this.attention.add(id, r.sentAt, r.seq);
    for (const who of r.unacked) this.unackedBy.set(who, (this.unackedBy.get(who) ?? 0) + 1);
  }

  private drop(id: string, r: Row): void {
    this.rows.delete(id);
    this.bySeq.delete(id, r.seq);
    if (r.pending) {
      this.pendingCount--;
      this.pendingBySent.delete(r.sentAt, r.seq);
      const mine = this.pendingBy.get(r.hot.message.from)!;
      mine.delete(id, r.seq);
      if (mine.size === 0) this.pendingBy.delete(r.hot.message.from);
    }
    if (r.awaiting) {
      this.awaitingCount--;
      this.awaitingByDue.delete(r.dueAt, r.seq);
    }
    if (this.needsAttention(r)) this.attention.delete(r.sentAt, r.seq);
    for (const who of r.unacked) this.unackedBy.set(who, this.unackedBy.get(who)! - 1);
  }

  /** As ledger's overdue() says, at `clock`: dead-lettered, or past its SLA with an ACK still owed. */
  private needsAttention(r: Row): boolean {
    return r.deadLettered || (r.awaiting && this.clock > r.dueAt);
  }

  /** Moves the clock: handoffs whose deadline it passed (or, if it went back, un-passed) change sides. */
  private at(now: number): void {
    if (now === this.clock) return;
    const [from, to] = now > this.clock ? [this.clock, now] : [now, this.clock];
    const crossed: { id: string; r: Row }[] = [];
    for (const e of this.awaitingByDue.from(from)) {
      if (e.at >= to) break;
      crossed.push({ id: e.id, r: this.rows.get(e.id)! });
    }
    // Drop with the old clock, keep with the new: each crossed row moves in or out of attention.
    for (const c of crossed) if (!c.r.deadLettered && this.needsAttention(c.r)) this.attention.delete(c.r.sentAt, c.r.seq);
    this.clock = now;
    for (const c of crossed) if (!c.r.deadLettered && this.needsAttention(c.r)) this.attention.add(c.id, c.r.sentAt, c.r.seq);
  }

  counts(): { open: number; pending: number; awaitingAck: number } {
    return { open: this.rows.size, pending: this.pendingCount, awaitingAck: this.awaitingCount };
  }

  /** How many open handoffs wait for the identity's ACK (coverage's unacked). */
  unacked(identity: string): number {
    return this.unackedBy.get(identity) ?? 0;
  }

  /** The same as ledger's overdue(state, now, cap), without looking at the open mail. */
  overdue(now: number, cap: number): OverdueSummary {
    this.at(now);
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

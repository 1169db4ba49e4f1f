// The editor's copy of the hub's snapshot, kept current by the change notifications (rows keyed
// by message id) instead of a whole snapshot per change. When the rows it holds can no longer
// fill a capped list (rows left that it never had), it says so and the caller fetches a snapshot.
import { SETTLED_CAP, SNAPSHOT_CAP, type LedgerEntry, type Snapshot, type SnapshotChange } from '../protocol/views';

/** Past this many rows, rows in neither list are dropped. */
const KEEP = 4 * SNAPSHOT_CAP;

// The hub's orders: messages by arrival, newest first; pending by send time, oldest first.
const newestFirst = (a: LedgerEntry, b: LedgerEntry) => b.seq - a.seq;
const oldestFirst = (a: LedgerEntry, b: LedgerEntry) => a.sentAt - b.sentAt || a.seq - b.seq;

export class LiveSnapshot {
  private base?: Snapshot;
  private readonly rows = new Map<string, LedgerEntry>();
  /** Settled and in history, newest first: the snapshot's, then each row a change took out of the hot set. */
  private settled: LedgerEntry[] = [];
  private view?: Snapshot;

  get snapshot(): Snapshot | undefined {
    if (!this.base) return undefined;
    this.view ??= this.materialize(this.base);
    return this.view;
  }

  /** Another hub now: what the last one said is no longer so (its link, its sessions) until this one says. */
  clear(): void {
    this.base = undefined;
    this.rows.clear();
    this.settled = [];
    this.view = undefined;
  }

  reset(s: Snapshot): void {
    this.base = s;
    this.rows.clear();
    for (const e of [...s.messages, ...s.pending]) this.rows.set(e.id, e);
    this.settled = s.settled ?? [];
    this.view = undefined;
  }

  /** Applies a change; false when a full snapshot is needed (none yet, or rows it never had must now show). */
  apply(c: SnapshotChange): boolean {
    if (!this.base) return false;
    const { upserts, removed, ...summary } = c;
    // A row leaves the hot set only when a checkpoint moves it to history: it is settled now.
    const archived = removed.flatMap((id) => this.rows.get(id) ?? []);
    if (archived.length) this.settled = [...archived, ...this.settled].sort(newestFirst).slice(0, SETTLED_CAP);
    const reopened = new Set(upserts.map((e) => e.id));
    if (this.settled.some((e) => reopened.has(e.id))) this.settled = this.settled.filter((e) => !reopened.has(e.id));
    for (const e of upserts) this.rows.set(e.id, e);
    for (const id of removed) this.rows.delete(id);
    this.base = { ...this.base, ...summary };
    // A change without a link means none is attached (any more): not "as before".
    if (!('link' in summary)) delete this.base.link;
    this.view = undefined;
    const pendingRows = [...this.rows.values()].filter((e) => e.pending).length;
    if (this.rows.size < Math.min(SNAPSHOT_CAP, c.openCount) || pendingRows < Math.min(SNAPSHOT_CAP, c.pendingCount))
      return false;
    if (this.rows.size > KEEP) this.prune();
    return true;
  }

  private materialize(base: Snapshot): Snapshot {
    const all = [...this.rows.values()];
    return {
      ...base,
      messages: all.sort(newestFirst).slice(0, SNAPSHOT_CAP),
      pending: all
        .filter((e) => e.pending)
        .sort(oldestFirst)
        .slice(0, SNAPSHOT_CAP),
      settled: this.settled,
    };
  }

  private prune(): void {
    const s = this.materialize(this.base!);
    const keep = new Set([...s.messages, ...s.pending].map((e) => e.id));
    for (const id of this.rows.keys()) if (!keep.has(id)) this.rows.delete(id);
  }
}

// The handoffs settled last, for the editor's Events list: a bounded window read from history's
// tail once (at most its size in lines, however long the history) and then kept as checkpoints
// archive more, so a restarted hub lists the finished handoffs the last one listed, and no
// snapshot reads history again.
import type { HotMessage } from '../bus/model';
import { SETTLED_CAP } from '../../protocol/views';

export class SettledWindow {
  /** Newest sent first; undefined until read. */
  private rows?: HotMessage[];
  /** Archived while the read was under way: it may or may not have seen them. */
  private early: HotMessage[] = [];
  private loading?: Promise<void>;

  constructor(
    private readonly read: (n: number) => Promise<HotMessage[]>,
    private readonly size = SETTLED_CAP,
  ) {}

  /** Reads history's tail, once. */
  load(): Promise<void> {
    return (this.loading ??= this.read(this.size).then(
      (read) => {
        this.rows = this.merge(this.early, read);
        this.early = [];
      },
      (e: unknown) => {
        this.loading = undefined; // the next snapshot tries again
        throw e;
      },
    ));
  }

  /** Just moved to history at a checkpoint. */
  archived(moved: readonly HotMessage[]): void {
    if (this.rows) this.rows = this.merge(moved, this.rows);
    else if (this.loading) this.early = this.merge(moved, this.early);
    // Not asked for yet: the first read finds them in history.
  }

  /** Newest sent first, at most the window's size (none before the first load). */
  list(): readonly HotMessage[] {
    return this.rows ?? [];
  }

  private merge(fresh: readonly HotMessage[], held: readonly HotMessage[]): HotMessage[] {
    const byId = new Map<string, HotMessage>();
    for (const h of [...fresh, ...held]) if (!byId.has(h.message.id)) byId.set(h.message.id, h);
    return [...byId.values()].sort((a, b) => b.message.seq - a.message.seq).slice(0, this.size);
  }
}

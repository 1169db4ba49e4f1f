// Message ids ordered by a time (sent, due) and then seq, in sorted blocks of a few hundred: add
// and delete cost a search and a short splice, and the first k (or those from a given time) cost
// k — so the oldest overdue or pending few cost the same with 10 or 100 000 open. A block is three
// parallel arrays, not an object per entry: the ledger holds three of these for every open
// message, and an entry object (with its boxed time) cost three times the array slots.
export interface Keyed {
  id: string;
  at: number;
  seq: number;
}

const BLOCK = 256;

interface Block {
  ids: string[];
  ats: number[];
  seqs: number[];
}

function before(b: Block, i: number, at: number, seq: number): boolean {
  return b.ats[i] < at || (b.ats[i] === at && b.seqs[i] < seq);
}

/**
 * Cuts a full block's second half off into an array of its own. Not splice: the first half would
 * keep the whole block's room, and that slack was two thirds of what every entry cost.
 */
function tail<T>(list: T[]): T[] {
  const rest = list.slice(BLOCK);
  list.length = BLOCK;
  return rest;
}

const entry = (b: Block, i: number): Keyed => ({ id: b.ids[i], at: b.ats[i], seq: b.seqs[i] });

export class SortedIds {
  private readonly blocks: Block[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The first block whose last entry is not before (at, seq); the last block when all are. */
  private blockOf(at: number, seq: number): number {
    let lo = 0;
    let hi = this.blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const b = this.blocks[mid];
      if (before(b, b.ids.length - 1, at, seq)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first entry of `block` not before (at, seq). */
  private static indexIn(block: Block, at: number, seq: number): number {
    let lo = 0;
    let hi = block.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(block, mid, at, seq)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Adds the entry; the caller adds each (at, seq) once. */
  add(id: string, at: number, seq: number): void {
    this.count++;
    if (this.blocks.length === 0) return void this.blocks.push({ ids: [id], ats: [at], seqs: [seq] });
    const b = this.blockOf(at, seq);
    const block = this.blocks[b];
    const i = SortedIds.indexIn(block, at, seq);
    if (i === block.ids.length) {
      // The common case, the newest entry: a splice would allocate the (empty) array it returns.
      block.ids.push(id);
      block.ats.push(at);
      block.seqs.push(seq);
    } else {
      block.ids.splice(i, 0, id);
      block.ats.splice(i, 0, at);
      block.seqs.splice(i, 0, seq);
    }
    if (block.ids.length > 2 * BLOCK)
      this.blocks.splice(b + 1, 0, { ids: tail(block.ids), ats: tail(block.ats), seqs: tail(block.seqs) });
  }

  delete(at: number, seq: number): void {
    if (this.blocks.length === 0) return;
    const b = this.blockOf(at, seq);
    const block = this.blocks[b];
    const i = SortedIds.indexIn(block, at, seq);
    if (i >= block.ids.length || block.ats[i] !== at || block.seqs[i] !== seq) return;
    this.count--;
    block.ids.splice(i, 1);
    block.ats.splice(i, 1);
    block.seqs.splice(i, 1);
    if (block.ids.length === 0) this.blocks.splice(b, 1);
  }

  /** Ascending, from the first entry at or after `at`; stop early for the first few. */
  *from(at = -Infinity): Generator<Keyed> {
    if (this.blocks.length === 0) return;
    let b = this.blockOf(at, -Infinity);
    let i = SortedIds.indexIn(this.blocks[b], at, -Infinity);
    for (; b < this.blocks.length; b++, i = 0)
      for (const block = this.blocks[b]; i < block.ids.length; i++) yield entry(block, i);
  }

  first(): Keyed | undefined {
    return this.blocks.length > 0 ? entry(this.blocks[0], 0) : undefined;
  }
}

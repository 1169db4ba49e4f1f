// Message ids in seq order: add at the tail (new messages come in seq order), delete anywhere,
// read the oldest or newest k in O(k) — so the oldest few of an identity's mail cost the same
// with 10 or 100 000 open. Held several times over for every open message (one list per question
// the indexes answer), so an entry is two array slots, not a linked node object nor a map slot:
// a delete leaves a hole, skipped by walks and squeezed out once holes outnumber entries.
export class SeqList {
  /** Ids in seq order; a deleted one leaves `undefined` until the next squeeze. */
  private order: (string | undefined)[] = [];
  /**
   * The seq of each place (kept at holes too, so the array stays sorted): an id is found by its
   * seq, which every caller knows, in a binary search. A map of id → place cost 37 bytes an entry
   * in each list, a third of the mail index at 100 000 open.
   */
  private seqs: number[] = [];
  private start = 0;
  private count = 0;
  /** Walks in progress: places must not move under them. */
  private walking = 0;

  get size(): number {
    return this.count;
  }

  has(id: string, seq: number): boolean {
    return this.placeOf(id, seq) >= 0;
  }

  /** Adds the id at its seq (seqs are the store's, one per message). */
  add(id: string, seq: number): void {
    const n = this.order.length;
    if (n === 0 || seq > this.seqs[n - 1]) {
      this.order.push(id);
      this.seqs.push(seq);
      this.count++;
      return;
    }
    // Out of order only when an older message is re-added: into its hole, or inserted in its place (rare).
    const at = this.lowerBound(seq);
    if (this.seqs[at] === seq) {
      if (this.order[at] !== undefined) return;
      this.order[at] = id;
    } else {
      this.order.splice(at, 0, id);
      this.seqs.splice(at, 0, seq);
    }
    this.count++;
    this.start = Math.min(this.start, at);
  }

  delete(id: string, seq: number): void {
    const at = this.placeOf(id, seq);
    if (at < 0) return;
    this.order[at] = undefined;
    this.count--;
    while (this.start < this.order.length && this.order[this.start] === undefined) this.start++;
    while (this.order.length > this.start && this.order[this.order.length - 1] === undefined) {
      this.order.pop();
      this.seqs.pop();
    }
    if (this.walking === 0 && this.order.length > 2 * this.count + 64) this.squeeze();
  }

  /** Oldest first, from the first seq after `afterSeq`; deleting the yielded id while iterating is safe. */
  *ids(afterSeq = 0): Generator<string> {
    for (const [id] of this.entries(afterSeq)) yield id;
  }

  /** Oldest first with their seqs, as `ids`. */
  *entries(afterSeq = 0): Generator<[id: string, seq: number]> {
    this.walking++;
    try {
      for (let i = Math.max(this.start, this.lowerBound(afterSeq + 1)); i < this.order.length; i++) {
        const id = this.order[i];
        if (id !== undefined) yield [id, this.seqs[i]];
      }
    } finally {
      this.walking--;
    }
  }

  /** Newest first with their seqs; deleting the yielded id while iterating is safe. */
  *newest(): Generator<[id: string, seq: number]> {
    this.walking++;
    try {
      for (let i = this.order.length - 1; i >= this.start; i--) {
        const id = this.order[i];
        if (id !== undefined) yield [id, this.seqs[i]];
      }
    } finally {
      this.walking--;
    }
  }

  private placeOf(id: string, seq: number): number {
    const at = this.lowerBound(seq);
    return this.seqs[at] === seq && this.order[at] === id ? at : -1;
  }

  /** The first place whose seq is not below `seq`. */
  private lowerBound(seq: number): number {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.seqs[mid] < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private squeeze(): void {
    const order: string[] = [];
    const seqs: number[] = [];
    for (let i = this.start; i < this.order.length; i++) {
      const id = this.order[i];
      if (id === undefined) continue;
      order.push(id);
      seqs.push(this.seqs[i]);
    }
    this.order = order;
    this.seqs = seqs;
    this.start = 0;
  }
}

/** Two lists' ids after `afterSeq` as one list in seq order; deleting the yielded id is safe. */
export function* bySeq(
  a: SeqList | undefined,
  b: SeqList | undefined,
  afterSeq = 0,
): Generator<{ id: string; seq: number }> {
  const walks = [a, b].map((list) => ({
    ids: list?.entries(afterSeq),
    next: undefined as { id: string; seq: number } | undefined,
  }));
  const step = (w: (typeof walks)[number]) => {
    const r = w.ids?.next();
    w.next = r && !r.done ? { id: r.value[0], seq: r.value[1] } : undefined;
  };
  try {
    walks.forEach(step);
    for (;;) {
      const [x, y] = walks;
      const w = x.next && (!y.next || x.next.seq <= y.next.seq) ? x : y;
      if (!w.next) return;
      const e = w.next;
      step(w);
      yield e;
    }
  } finally {
    for (const w of walks) w.ids?.return(undefined); // a walk left open would keep its list from squeezing holes
  }
}

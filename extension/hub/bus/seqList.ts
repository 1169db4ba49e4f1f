// Message ids in seq order: add at the tail (new messages come in seq order), delete anywhere,
// read the oldest or newest k in O(k) — so the oldest few of an identity's mail cost the same
// with 10 or 100 000 open. Held several times over for every open message (one list per question
// the indexes answer), so an entry is a map slot and two array slots, not a linked node object:
// a delete leaves a hole, skipped by walks and squeezed out once holes outnumber entries.
export class SeqList {
  /** id → its place in `order`. */
  private readonly places = new Map<string, number>();
  /** Ids in seq order from `start`; a deleted one leaves `undefined` until the next squeeze. */
  private order: (string | undefined)[] = [];
  /** The seq of each place (kept at holes too, so the array stays sorted for binary search). */
  private seqs: number[] = [];
  private start = 0;
  /** Walks in progress: places must not move under them. */
  private walking = 0;

  get size(): number {
    return this.places.size;
  }

  has(id: string): boolean {
    return this.places.has(id);
  }

  seqOf(id: string): number | undefined {
    const at = this.places.get(id);
    return at === undefined ? undefined : this.seqs[at];
  }

  add(id: string, seq: number): void {
    if (this.places.has(id)) return;
    const n = this.order.length;
    if (n > this.start && seq < this.seqs[n - 1]) {
      // Out of order only when an older message is re-added: insert it in its place (rare).
      const at = this.firstAfter(seq);
      this.order.splice(at, 0, id);
      this.seqs.splice(at, 0, seq);
      for (let i = at; i < this.order.length; i++) if (this.order[i] !== undefined) this.places.set(this.order[i]!, i);
      return;
    }
    this.places.set(id, n);
    this.order.push(id);
    this.seqs.push(seq);
  }

  delete(id: string): void {
    const at = this.places.get(id);
    if (at === undefined) return;
    this.places.delete(id);
    this.order[at] = undefined;
    while (this.start < this.order.length && this.order[this.start] === undefined) this.start++;
    while (this.order.length > this.start && this.order[this.order.length - 1] === undefined) {
      this.order.pop();
      this.seqs.pop();
    }
    if (this.walking === 0 && this.order.length > 2 * this.places.size + 64) this.squeeze();
  }

  /** Oldest first, from the first seq after `afterSeq`; deleting the yielded id while iterating is safe. */
  *ids(afterSeq = 0): Generator<string> {
    this.walking++;
    try {
      for (let i = Math.max(this.start, this.firstAfter(afterSeq)); i < this.order.length; i++) {
        const id = this.order[i];
        if (id !== undefined) yield id;
      }
    } finally {
      this.walking--;
    }
  }

  /** Newest first; deleting the yielded id while iterating is safe. */
  *newest(): Generator<string> {
    this.walking++;
    try {
      for (let i = this.order.length - 1; i >= this.start; i--) {
        const id = this.order[i];
        if (id !== undefined) yield id;
      }
    } finally {
      this.walking--;
    }
  }

  /** The first place whose seq is above `seq`. */
  private firstAfter(seq: number): number {
    let lo = this.start;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.seqs[mid] <= seq) lo = mid + 1;
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
      this.places.set(id, order.length);
      order.push(id);
      seqs.push(this.seqs[i]);
    }
    this.order = order;
    this.seqs = seqs;
    this.start = 0;
  }
}

/** Two lists' ids after `afterSeq` as one list in seq order; deleting the yielded id is safe. */
export function* bySeq(a: SeqList | undefined, b: SeqList | undefined, afterSeq = 0): Generator<{ id: string; seq: number }> {
  const walks = [a, b].map((list) => ({ list, ids: list?.ids(afterSeq), next: undefined as { id: string; seq: number } | undefined }));
  const step = (w: (typeof walks)[number]) => {
    const r = w.ids?.next();
    w.next = r && !r.done ? { id: r.value, seq: w.list!.seqOf(r.value)! } : undefined;
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

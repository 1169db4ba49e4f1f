// Message ids in seq order, as a doubly linked list over a map: add at the tail (new messages
// come in seq order), delete anywhere and read the oldest k in O(1) each — so the oldest few of
// an identity's mail cost the same with 10 or 100 000 open.
interface Node {
  id: string;
  seq: number;
  prev?: Node;
  next?: Node;
}

export class SeqList {
  private readonly nodes = new Map<string, Node>();
  private head?: Node;
  private tail?: Node;

  get size(): number {
    return this.nodes.size;
  }

  has(id: string): boolean {
    return this.nodes.has(id);
  }

  seqOf(id: string): number | undefined {
    return this.nodes.get(id)?.seq;
  }

  add(id: string, seq: number): void {
    if (this.nodes.has(id)) return;
    const node: Node = { id, seq };
    this.nodes.set(id, node);
    // Out of order only when an older message is re-added: walk back to its place.
    let after = this.tail;
    while (after && after.seq > seq) after = after.prev;
    node.prev = after;
    node.next = after ? after.next : this.head;
    if (node.prev) node.prev.next = node;
    else this.head = node;
    if (node.next) node.next.prev = node;
    else this.tail = node;
  }

  delete(id: string): void {
    const node = this.nodes.get(id);
    if (!node) return;
    this.nodes.delete(id);
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
  }

  /** Oldest first, from the first seq after `afterSeq`; deleting the yielded id while iterating is safe. */
  *ids(afterSeq = 0): Generator<string> {
    let node = this.head;
    while (node && node.seq <= afterSeq) node = node.next;
    while (node) {
      const next = node.next;
      yield node.id;
      node = next;
    }
  }

  /** Newest first; deleting the yielded id while iterating is safe. */
  *newest(): Generator<string> {
    let node = this.tail;
    while (node) {
      const prev = node.prev;
      yield node.id;
      node = prev;
    }
  }
}

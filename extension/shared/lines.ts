// Newline-delimited input, bounded: every reader of a line protocol on our sockets and pipes (the
// hello and its reply, the hook's answer, the no-hub bridge's stdin) splits bytes the same way,
// and a line past its limit is refused instead of buffered without end.

export class LineBuffer {
  private pending = Buffer.alloc(0);
  private over = false;

  constructor(private readonly maxLineBytes: number) {}

  /** True once a line grew past the limit; nothing more is returned after that. */
  get overLimit(): boolean {
    return this.over;
  }

  /** The complete lines so far, as text; an unterminated tail is kept for the next chunk. */
  lines(chunk: Buffer | string): string[] {
    if (this.over) return [];
    this.pending = Buffer.concat([this.pending, typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk]);
    const out: string[] = [];
    let start = 0;
    for (let nl = this.pending.indexOf(0x0a); nl >= 0; nl = this.pending.indexOf(0x0a, start)) {
      if (nl - start > this.maxLineBytes) return this.refuse();
      out.push(this.pending.toString('utf8', start, nl));
      start = nl + 1;
    }
    this.pending = this.pending.subarray(start);
    if (this.pending.length > this.maxLineBytes) return this.refuse();
    return out;
  }

  /** The first line and the raw bytes after it (for a protocol that changes after its first line). */
  firstLine(chunk: Buffer): { line: string; rest: Buffer } | undefined {
    if (this.over) return undefined;
    this.pending = Buffer.concat([this.pending, chunk]);
    const nl = this.pending.indexOf(0x0a);
    if (nl < 0 || nl > this.maxLineBytes) {
      if (nl > this.maxLineBytes || this.pending.length > this.maxLineBytes) this.refuse();
      return undefined;
    }
    return { line: this.pending.toString('utf8', 0, nl), rest: this.pending.subarray(nl + 1) };
  }

  private refuse(): [] {
    this.over = true;
    this.pending = Buffer.alloc(0);
    return [];
  }
}

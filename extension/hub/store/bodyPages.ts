// Where the hot set's bodies are read back from (bus/body.ts): the checkpoint file last written or
// read, through a read-ahead window — the checkpoint's writer asks for every body in file order,
// and a window of them costs one read. Synchronous: a body is asked for by a reply being built,
// and a read from the page cache takes microseconds.
//
// Two files take turns (one page source, its refs telling the two apart): once a checkpoint is
// written, its bodies' refs are moved to the new file a slice at a time (all at once holds the
// commits), and until then the old refs read the old file, kept open.
import { closeBodyPages, registerBodyPages, type BodyPages } from '../bus/body';
import type { StoredMessage } from '../bus/model';
import type { StoreFileReader, StoreFs } from './storeFs';

const WINDOW = 64 * 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

/** One checkpoint file, read through a window. */
class BodyFile {
  private fd?: StoreFileReader;
  private readonly window = Buffer.alloc(WINDOW);
  private windowAt = 0;
  private windowLength = 0;
  /** The last fill reached the end of the file. */
  private atEnd = false;

  constructor(private readonly fs: StoreFs) {}

  open(path: string): void {
    const fd = this.fs.openReader(path);
    this.fd?.close();
    this.fd = fd;
    this.windowLength = 0;
  }

  /** Its file is no longer read (every ref moved to the other); it may be opened again. */
  release(): void {
    this.fd?.close();
    this.fd = undefined;
  }

  literal(offset: number): string {
    const { buf, start, end } = this.span(offset, 'the message body', (b, from, to) => {
      if (b[from] !== QUOTE) throw new Error(`the checkpoint holds no message body at byte ${offset}`);
      const close = closingQuote(b, from + 1, to);
      return close < 0 ? -1 : close + 1;
    });
    return buf.toString('utf8', start, end);
  }

  /** The bytes from `offset` up to the next newline (not included): a line of the current file, copied. */
  line(offset: number): Buffer {
    const { buf, start, end } = this.span(offset, 'the line', (b, from, to) =>
      b.subarray(0, to).indexOf(NEWLINE, from),
    );
    return Buffer.from(buf.subarray(start, end));
  }

  /**
   * The bytes from `offset` to where `endOf` finds their end (exclusive, or -1 if not before `to`):
   * in the window, or — running past it — in a window from `offset`, or, longer than a window,
   * read whole on their own, so the window stays small.
   */
  private span(
    offset: number,
    what: string,
    endOf: (buf: Buffer, from: number, to: number) => number,
  ): { buf: Buffer; start: number; end: number } {
    if (this.fd === undefined) throw new Error(`no checkpoint is open to read ${what} at byte ${offset} from`);
    if (offset < this.windowAt || offset >= this.windowAt + this.windowLength) this.fill(offset);
    const start = offset - this.windowAt;
    const end = endOf(this.window, start, this.windowLength);
    if (end >= 0) return { buf: this.window, start, end };
    if (start > 0) return (this.fill(offset), this.span(offset, what, endOf));
    if (this.atEnd) throw new Error(`${what} at byte ${offset} runs past the end of the checkpoint`);
    for (let length = 2 * WINDOW; ; length *= 2) {
      const buf = Buffer.alloc(length);
      const got = this.fd.read(buf, 0, length, offset);
      const whole = endOf(buf, 0, got);
      if (whole >= 0) return { buf, start: 0, end: whole };
      if (got < length) throw new Error(`${what} at byte ${offset} runs past the end of the checkpoint`);
    }
  }

  private fill(offset: number): void {
    this.windowAt = offset;
    this.windowLength = this.fd!.read(this.window, 0, WINDOW, offset);
    this.atEnd = this.windowLength < WINDOW;
  }
}

/**
 * The store's bodies: the refs of the document last read or written, and — while they are being
 * moved — those of the one it replaced.
 */
export class CheckpointBodies implements BodyPages {
  private readonly files: [BodyFile, BodyFile];
  private current: 0 | 1 = 0;
  private readonly refs = registerBodyPages(this);
  /** Refs still to move from the replaced file to the current one (the body's message, its new offset). */
  private moving: [StoredMessage, number][] = [];
  private moved = 0;

  constructor(fs: StoreFs) {
    this.files = [new BodyFile(fs), new BodyFile(fs)];
  }

  literal(offset: number, file: 0 | 1): string {
    return this.files[file].literal(offset);
  }

  /** A ref for a body at this byte offset of the current file. */
  ref(offset: number): number {
    return this.refs.ref(offset, this.current);
  }

  /** Where in the current file a ref points (undefined for a ref into the other file or another store). */
  offsetOf(ref: number): number | undefined {
    return this.refs.offsetOf(ref, this.current);
  }

  /** The bytes from `offset` of the current file up to the next newline (not included), copied. */
  line(offset: number): Buffer {
    return this.files[this.current].line(offset);
  }

  /** Bodies are read from this file from now on: the checkpoint just read. */
  openRead(path: string): void {
    this.files[this.current].open(path);
  }

  /**
   * The checkpoint just written over the current one: `placed` (each message, where its body went)
   * are its bodies. New refs point into it at once; the messages' refs move with `move`, until
   * then reading the replaced file.
   */
  replaced(path: string, placed: [StoredMessage, number][]): void {
    this.moveAll();
    const next = this.current === 0 ? 1 : 0;
    this.files[next].open(path); // first: if it cannot be opened, the refs still read the current file
    this.current = next;
    this.moving = placed;
    this.moved = 0;
  }

  /** Moves up to `count` refs to the current file; true once none is left (the replaced file closed). */
  move(count: number): boolean {
    const end = Math.min(this.moving.length, this.moved + count);
    for (let i = this.moved; i < end; i++) this.moving[i][0].body = this.ref(this.moving[i][1]);
    this.moved = end;
    if (end < this.moving.length) return false;
    this.moving = [];
    this.moved = 0;
    this.files[this.current === 0 ? 1 : 0].release();
    return true;
  }

  /** Before the files change turns again: no ref may still point into the one to be reused. */
  moveAll(): void {
    this.move(Infinity);
  }

  close(): void {
    closeBodyPages(this);
    for (const file of this.files) file.release();
  }
}

/** The index of the quote that ends a JSON string whose text starts at `from`, or -1 before `to`. */
export function closingQuote(buf: Buffer, from: number, to: number): number {
  const text = buf.subarray(0, to);
  for (let i = text.indexOf(QUOTE, from); i >= 0; i = text.indexOf(QUOTE, i + 1)) {
    let slashes = 0;
    while (text[i - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return i;
  }
  return -1;
}

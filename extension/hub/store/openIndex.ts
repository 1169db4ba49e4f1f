// What the hub's indexes need of each open message, kept beside the checkpoint document
// (`state.json.index`): where the message's line starts, its seq, whether it is settling, and for
// each recipient the mail lists it is in (bus/mailIndex.ts `listsOf`) and where its waiting
// handoff was surfaced. A hub starting on it builds its open set and mail index without parsing a
// message line; each message is parsed when first read (lazyHot.ts). Parsing the lines is most of
// a start on a full store (docs/performance.md, "Starting on a full store").
//
// It is written after the document and names it by the document's checkpoint id: an index that
// names another document (a crash between the two writes, a build that wrote no index, a torn or
// foreign file) is not used, and the start parses the document. Binary, little-endian:
// a JSON header line, then a record per open message in the document's order:
//   str id, f64 lineAt, f64 seq, u8 settling, u32 recipients, then per recipient:
//   str identity, u8 lists, u32 surfacings, then per surfacing: str session, str cliSession
// where str is a u32 byte length (NONE: absent) and UTF-8 bytes.
import { dict } from '../bus/dict';
import { listsOf, type ListedFor } from '../bus/mailIndex';
import type { HotMessage } from '../bus/model';
import { isSettled } from '../bus/reduce';

const MAGIC = 'handoff-open-index';
const VERSION = 1;
const NONE = 0xffffffff;
/** An index header longer than this is not one. */
const MAX_HEADER = 512;
const ARRAY_INDEX = /^(?:0|[1-9][0-9]{0,9})$/;

interface Header {
  magic: string;
  version: number;
  checkpoint: string;
  /** The document's size: one cut short or grown is not the one indexed. */
  documentBytes: number;
  count: number;
  bytes: number;
  /** The document's CRC-32, checked at a start that does not parse it (absent from earlier indexes). */
  documentCrc32?: number;
}

/** Grows as records are put; one buffer at the end. */
class Bytes {
  private buf: Buffer;
  length = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.length++] = v;
  }

  u32(v: number): void {
    this.room(4);
    this.length = this.buf.writeUInt32LE(v, this.length);
  }

  f64(v: number): void {
    this.room(8);
    this.length = this.buf.writeDoubleLE(v, this.length);
  }

  str(s: string | undefined): void {
    if (s === undefined) return this.u32(NONE);
    const n = Buffer.byteLength(s);
    this.u32(n);
    this.room(n);
    this.length += this.buf.write(s, this.length);
  }

  bytes(b: Buffer): void {
    this.room(b.length);
    this.length += b.copy(this.buf, this.length);
  }

  take(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** What the index keeps of a message as it is now, but its id and place, put into `out`. */
function putFacts(out: Bytes, hot: HotMessage): void {
  out.f64(hot.message.seq);
  out.u8(isSettled(hot, Infinity) ? 1 : 0);
  // The recipients the mail index follows (MailIndex.follow), in its order.
  const recipients = hot.message.recipients;
  out.u32(recipients.length);
  for (const r of recipients) {
    out.str(r);
    out.u8(listsOf(hot, r));
    const surfacings = hot.deliveries[r]?.surfacings ?? [];
    out.u32(surfacings.length);
    for (const s of surfacings) {
      out.str(s.session);
      out.str(s.cliSession);
    }
  }
}

/** A message's facts as they are now, kept apart: for a line frozen while a checkpoint is written behind the commits. */
export function factsOf(hot: HotMessage): Buffer {
  const out = new Bytes(128);
  putFacts(out, hot);
  return Buffer.from(out.take());
}

/** The index of a document being written, a record per line. */
export class OpenIndexWriter {
  private readonly records = new Bytes(1 << 16);
  private count = 0;

  /** `facts`: frozen with the line (factsOf), or taken from the message as it is now. */
  add(id: string, lineAt: number, facts: Buffer | HotMessage): void {
    this.records.str(id);
    this.records.f64(lineAt);
    if (Buffer.isBuffer(facts)) this.records.bytes(facts);
    else putFacts(this.records, facts);
    this.count++;
  }

  /** The file's bytes, naming the document `checkpoint` of `documentBytes`, which sums to `documentCrc32`. */
  finish(checkpoint: string, documentBytes: number, documentCrc32: number): Buffer {
    const records = this.records.take();
    const header: Header = {
      magic: MAGIC,
      version: VERSION,
      checkpoint,
      documentBytes,
      count: this.count,
      bytes: records.length,
      documentCrc32,
    };
    return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), records]);
  }
}

/** One message as the mail index takes it back (MailIndex.restored). */
export interface MailEntry {
  id: string;
  seq: number;
  listed: ListedFor[];
}

/** An index read back: the open messages in the document's order, their lines' places, which are settling. */
export interface OpenIndex {
  /** id → where its line starts, in the document's order (ids are never array indices: see readOpenIndex). */
  readonly places: Record<string, number>;
  readonly count: number;
  readonly documentCrc32?: number;
  /** The open messages settled or to settle once their time is up (store.ts `settling`). */
  readonly settling: string[];
  /** Each message's seq and lists, decoded as they are walked. */
  mailEntries(): Iterable<MailEntry>;
}

class Reader {
  at: number;
  constructor(
    private readonly buf: Buffer,
    start: number,
  ) {
    this.at = start;
  }

  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new RangeError('the index ends inside a record');
  }

  u8(): number {
    this.need(1);
    return this.buf[this.at++];
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }

  str(): string | undefined {
    const n = this.u32();
    if (n === NONE) return undefined;
    this.need(n);
    const s = this.buf.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }

  /** Steps over a string; one that must be there and is absent throws. */
  skipStr(optional = false): void {
    const n = this.u32();
    if (n === NONE) {
      if (!optional) throw new RangeError('the index lacks a string it must hold');
      return;
    }
    this.need(n);
    this.at += n;
  }

  /** Steps over a recipient list (checked as it goes). */
  skipListed(): void {
    for (let r = this.u32(); r > 0; r--) {
      this.skipStr();
      this.u8();
      for (let s = this.u32(); s > 0; s--) {
        this.skipStr();
        this.skipStr(true);
      }
    }
  }

  listed(): ListedFor[] {
    const out: ListedFor[] = [];
    for (let r = this.u32(); r > 0; r--) {
      const identity = this.str()!;
      const lists = this.u8();
      const seen: ListedFor['seen'] = [];
      for (let s = this.u32(); s > 0; s--) {
        const session = this.str()!;
        const cliSession = this.str();
        seen.push(cliSession === undefined ? { session } : { session, cliSession });
      }
      out.push({ identity, lists, seen });
    }
    return out;
  }
}

/**
 * The index in `file`, if it is one and names the document `checkpoint` of `documentBytes`;
 * undefined otherwise (the start then parses the document). Every record is checked to lie within
 * the file here, once.
 */
export function readOpenIndex(file: Buffer, checkpoint: string, documentBytes: number): OpenIndex | undefined {
  const nl = file.subarray(0, MAX_HEADER).indexOf(0x0a);
  if (nl < 0) return undefined;
  let header: Header;
  try {
    header = JSON.parse(file.toString('utf8', 0, nl)) as Header;
  } catch {
    return undefined;
  }
  if (
    header?.magic !== MAGIC ||
    header.version !== VERSION ||
    header.checkpoint !== checkpoint ||
    header.documentBytes !== documentBytes ||
    !Number.isSafeInteger(header.count) ||
    header.count < 0 ||
    header.bytes !== file.length - nl - 1 ||
    header.count > header.bytes
  )
    return undefined;
  const places = dict<number>();
  const settling: string[] = [];
  const ids: string[] = new Array(header.count);
  const r = new Reader(file, nl + 1);
  try {
    for (let i = 0; i < header.count; i++) {
      const id = r.str();
      // An id that is an array index would be listed first by the object that holds the places, out of the document's order.
      if (id === undefined || (id.length <= 10 && ARRAY_INDEX.test(id)) || id in places) return undefined;
      places[id] = r.f64();
      ids[i] = id;
      r.f64();
      if (r.u8()) settling.push(id);
      r.skipListed();
    }
  } catch {
    return undefined;
  }
  if (r.at !== file.length) return undefined;
  return {
    places,
    count: header.count,
    documentCrc32: Number.isSafeInteger(header.documentCrc32) ? header.documentCrc32 : undefined,
    settling,
    *mailEntries() {
      const m = new Reader(file, nl + 1);
      for (let i = 0; i < ids.length; i++) {
        m.skipStr();
        m.f64();
        const seq = m.f64();
        m.u8();
        yield { id: ids[i], seq, listed: m.listed() };
      }
    },
  };
}

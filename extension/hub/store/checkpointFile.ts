// lowdb adapter for the checkpoint document (state.json), written and read one open message at a
// time. The document is the same JSON as ever — any JSON reader parses it — laid out in lines: a
// short first line that opens the hot set (`{"format":1,"journalN":N,"state":{"hot":{`), one line
// per open message, and a last line that closes it and holds the rest of the state: a message at a
// time, so no checkpoint builds, and no start parses, the whole document as one string (its size
// and cost at 100 000 open: docs/performance.md). A document on one line (an older build's, or
// edited by hand) is parsed whole.
//
// Once the document is read or written, the open messages' bodies are left in it: each message
// holds where its body's literal starts (bus/body.ts), read back through `bodies`. The writer
// copies those literals from the old document to the new one as they stand.
//
// Beside it, the open index (openIndex.ts) lets a start leave the lines unparsed until read.
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Adapter } from 'lowdb';
import { bodyLiteral } from '../bus/body';
import { dict, parseState } from '../bus/dict';
import type { BusState, HotMessage, StoredMessage } from '../bus/model';
import { CheckpointBodies, closingQuote } from './bodyPages';
import { checkpointDamage, documentCrc32 } from './checkpointDamage';
import { readLines } from './lineReader';
import { StoreDamage } from './storeDamage';
import { replaceDurably } from './replaceDurably';
import { LazyHot } from './lazyHot';
import { factsOf, OpenIndexWriter, readOpenIndex, type OpenIndex } from './openIndex';
import { nodeFs, writeAll, type StoreFile, type StoreFs } from './storeFs';
import { reviveHot, reviveState } from './revive';

export interface Checkpoint {
  format: number;
  journalN: number;
  /** This document's own id, named by its open index. */
  checkpoint?: string;
  state: BusState;
}

/** A start from the document's open index: its messages unparsed in the hot set until read. */
export interface Restored {
  /** Until the start has taken what it needs of it. */
  index?: OpenIndex;
  lazy: LazyHot;
}

/**
 * The document as it stood at one moment, taken at once, to be written while commits go on: the
 * rest of the state is serialised here, each open message's line when it is written — or, for a
 * message an event changes first, just before that change (`freeze`).
 */
export interface CheckpointSnapshot {
  /** The document's checkpoint id, which its open index names. */
  readonly id: string;
  readonly head: Buffer;
  readonly tail: Buffer;
  /**
   * The open messages, each visited once: a live view of the hot set's ids, so none is listed at
   * the snapshot (listing them held the commits); those added after it (`born`) are passed over.
   */
  readonly ids: Iterable<string>;
  /** Open messages added since the snapshot: not in its document. */
  readonly born: Set<string>;
  /** Whether a message is as the document being replaced holds it, at the snapshot. */
  readonly unchanged: (id: string) => boolean;
  /** Lines of messages changed since the snapshot, as they stood at it, with their open index facts (openIndex.ts). */
  readonly frozen: Map<string, [line: Buffer, facts: Buffer]>;
  /** Messages whose line is written: only the others need freezing. */
  readonly written: Set<string>;
}

const HOT_OPEN = '"hot":{';
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE = 0x7d;
/** What follows an open message's line: a comma unless it is the last. */
const SEPARATOR = Buffer.from(',\n');
const LAST = Buffer.from('\n');
/** The main thread's time a checkpoint writes for before it lets commits run. */
const SLICE_MS = 1;
/** Refs moved to a new document per turn of the event loop (bodyPages.ts). */
const MOVE_SLICE = 1024;
/** Bytes read or written at a time. */
const CHUNK = 1 << 20;
/** Bytes of a checkpoint written behind the commits between two fdatasyncs of it. */
const SYNC_EVERY = 4 * CHUNK;

/**
 * An open message's line starts with its body: `"<id>":{"message":{"body":"…",` — so the loader
 * finds the literal where the line starts, with no search (any JSON reader reads the same object).
 */
const bodyHead = (id: string) => `${JSON.stringify(id)}:{"message":{"body":`;
/** What follows the id's literal up to the body's. */
const AFTER_ID = Buffer.from(':{"message":{"body":');

/**
 * An open message's line as the writer writes it, parsed without its body: the body's literal
 * (most of the line) is neither decoded nor parsed, only stepped over, and left where it is. Its
 * offset is where the literal starts. Undefined for a line in any other shape.
 */
function entryWithoutBody(bytes: Buffer): { id: string; value: HotMessage; bodyAt: number } | undefined {
  if (bytes[0] !== QUOTE) return undefined;
  const idEnd = bytes.indexOf(QUOTE, 1);
  if (idEnd < 0 || bytes.subarray(1, idEnd).includes(BACKSLASH)) return undefined; // an id with escapes: parsed whole
  const bodyAt = idEnd + 1 + AFTER_ID.length;
  if (!bytes.subarray(idEnd + 1, bodyAt).equals(AFTER_ID) || bytes[bodyAt] !== QUOTE) return undefined;
  const bodyEnd = closingQuote(bytes, bodyAt + 1, bytes.length);
  if (bodyEnd < 0) return undefined;
  const end = bytes[bytes.length - 1] === COMMA ? bytes.length - 1 : bytes.length;
  // The body stays first among the message's fields, as a placeholder: the same object shape as a whole parse.
  const value = JSON.parse(`{"message":{"body":0${bytes.toString('utf8', bodyEnd + 1, end)}`) as HotMessage;
  return { id: bytes.toString('utf8', 1, idEnd), value, bodyAt };
}

/** An open message's line, its body's literal copied from where it is held. */
function entryLine(id: string, hot: HotMessage): string {
  const { message: m, ...rest } = hot;
  const literal = typeof m.body === 'string' ? JSON.stringify(m.body) : bodyLiteral(m.body);
  const fields = JSON.stringify({ ...m, body: undefined }); // `{"id":…}`, the body left out
  const others = JSON.stringify({ message: 0, ...rest }).slice('{"message":0'.length); // `,"deliveries":…}`
  return `${bodyHead(id)}${literal}${fields === '{}' ? '' : ','}${fields.slice(1)}${others}`;
}

/** The first line, if the document is in the line layout: it ends where the hot set opens. */
async function firstLine(fh: StoreFile): Promise<string | undefined> {
  const head = Buffer.alloc(256); // it holds two numbers
  const bytesRead = await fh.read(head, 0, head.length, 0);
  const nl = head.subarray(0, bytesRead).indexOf(0x0a);
  const line = nl < 0 ? undefined : head.toString('utf8', 0, nl);
  return line?.endsWith(HOT_OPEN) ? line : undefined;
}

/** The checkpoint id a first line names, if any. */
function checkpointIdOf(first: string): string | undefined {
  return /"checkpoint":"([0-9a-f]{1,64})"/.exec(first)?.[1];
}

/** The last line of the document (its tail: the rest of the state), read from the end. */
async function lastLine(fh: StoreFile, size: number): Promise<string> {
  for (let length = 64 * 1024; ; length *= 2) {
    const from = Math.max(0, size - length);
    const buf = Buffer.alloc(size - from);
    for (let got = 0; got < buf.length;) {
      const n = await fh.read(buf, got, buf.length - got, from + got);
      if (n === 0) throw new SyntaxError('the checkpoint ends before its last line');
      got += n;
    }
    const end = buf[buf.length - 1] === 0x0a ? buf.length - 1 : buf.length;
    const nl = buf.subarray(0, end).lastIndexOf(0x0a);
    if (nl >= 0) return buf.toString('utf8', nl + 1, end);
    if (from === 0) throw new SyntaxError('the checkpoint has no last line');
  }
}

export class CheckpointFile implements Adapter<Checkpoint> {
  /** Size of the document last read or written; the store paces checkpoints by it. */
  bytesOnDisk = 0;
  /** Set by `read` when the document's open index was used: its messages are parsed when first read. */
  restored?: Restored;
  /** The open index could not be written (the document was): the next start parses the document. */
  onIndexError?: (e: unknown) => void;
  /** Where the open messages' bodies are read back from: this document. */
  private readonly bodies: CheckpointBodies;
  /**
   * Whether an open message is as this document holds it (no event changed it since): the
   * writer then copies its line as it stands, not writing it anew. Set by the store, which sees
   * every event applied (bus/reduce.ts `changing`); unset, every line is written anew.
   */
  unchanged: (id: string) => boolean = () => false;

  constructor(
    readonly path: string,
    private readonly fs: StoreFs = nodeFs,
  ) {
    this.bodies = new CheckpointBodies(fs);
  }

  get indexPath(): string {
    return `${this.path}.index`;
  }

  async read(): Promise<Checkpoint | null> {
    let fh: StoreFile;
    try {
      fh = await this.fs.open(this.path, 'read');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    try {
      this.bytesOnDisk = await fh.size();
      const first = await firstLine(fh);
      if (first === undefined) return await this.parseWhole(fh);
      const lazy = await this.fromIndex(fh, first);
      if (lazy) return lazy;
      const doc = await this.parseLines(fh, first);
      this.bodies.openRead(this.path);
      return doc;
    } finally {
      await fh.close();
    }
  }

  /** A document in the one-line layout earlier versions wrote: parsed whole, as it was. */
  private async parseWhole(fh: StoreFile): Promise<Checkpoint> {
    try {
      return parseState((await this.fs.readFile(this.path)).toString('utf8'), revived);
    } catch (e) {
      throw await this.damaged(fh, e);
    }
  }

  /** What a document that did not parse, or does not sum to its checksum, is told by: where it is damaged. */
  private async damaged(fh: StoreFile, e: unknown, expectedCrc32?: number): Promise<Error> {
    const damage = await checkpointDamage(this.path, fh, expectedCrc32);
    return damage ? new StoreDamage(damage) : (e as Error);
  }

  /** The document with its messages left unparsed, if its open index names it. */
  private async fromIndex(fh: StoreFile, first: string): Promise<Checkpoint | undefined> {
    const id = checkpointIdOf(first);
    if (id === undefined) return undefined;
    let file: Buffer;
    try {
      file = await this.fs.readFile(this.indexPath);
    } catch {
      return undefined; // none: parsed whole
    }
    const index = readOpenIndex(file, id, this.bytesOnDisk);
    // Nothing open: the document is its first and last lines, and parsing it costs nothing.
    if (!index || index.count === 0) return undefined;
    // The lines are not parsed here: damage inside one would surface only once it is read, the
    // store long open. Summing the bytes costs a read of the document, not a parse of it.
    if (index.documentCrc32 !== undefined && (await documentCrc32(fh)) !== index.documentCrc32)
      throw await this.damaged(fh, new Error(`${this.path} does not match its open index`), index.documentCrc32);
    const last = await lastLine(fh, this.bytesOnDisk);
    if (last.charCodeAt(0) !== CLOSE) throw new SyntaxError(`${this.path} ends before its last line`);
    const doc = revived(JSON.parse(`${first}${last}`) as Checkpoint);
    this.bodies.openRead(this.path);
    const lazy = new LazyHot(
      doc.state,
      index.places,
      index.count,
      (mid, lineAt) => this.parseAt(mid, lineAt),
      () => (this.restored = undefined),
    );
    this.restored = { index, lazy };
    return doc;
  }

  /** The open message whose line starts at `lineAt` of the document read, parsed. */
  private parseAt(id: string, lineAt: number): HotMessage {
    const bytes = this.bodies.line(lineAt);
    const [parsed] = this.parseEntries(bytes, lineAt);
    if (parsed?.id !== id)
      throw new Error(
        `${this.path} holds no line for message ${id} at byte ${lineAt}: its open index does not match it`,
      );
    return parsed.hot;
  }

  /** An open message's line (its separator included or not), parsed: its body left in the document. */
  private parseEntries(bytes: Buffer, at: number): { id: string; hot: HotMessage }[] {
    const fast = entryWithoutBody(bytes);
    if (fast) {
      const hot = reviveHot(fast.value, fast.id);
      hot.message.body = this.bodies.ref(at + fast.bodyAt);
      return [{ id: fast.id, hot }];
    }
    const line = bytes.toString('utf8');
    const entry = JSON.parse(`{${line.endsWith(',') ? line.slice(0, -1) : line}}`) as Record<string, HotMessage>;
    const out: { id: string; hot: HotMessage }[] = [];
    for (const id in entry) {
      const hot = reviveHot(entry[id], id);
      // Left in the file when the line starts with it, as the writer writes it (else it stays in memory).
      const head = bodyHead(id);
      if (typeof hot.message.body === 'string' && line.startsWith(head) && line.charCodeAt(head.length) === 0x22) {
        hot.message.body = this.bodies.ref(at + Buffer.byteLength(head));
      }
      out.push({ id, hot });
    }
    return out;
  }

  private async parseLines(fh: StoreFile, first: string): Promise<Checkpoint> {
    const hot = dict<HotMessage>();
    try {
      for await (const { bytes, at } of readLines(fh, Buffer.byteLength(first) + 1)) {
        // An entry line starts with its key (a JSON string); the last line closes the hot set.
        if (bytes[0] === CLOSE) {
          const doc = revived(JSON.parse(`${first}${bytes.toString('utf8')}`) as Checkpoint);
          doc.state.hot = hot;
          return doc;
        }
        for (const entry of this.parseEntries(bytes, at)) hot[entry.id] = entry.hot;
      }
      throw new SyntaxError(`${this.path} ends before its last line`);
    } catch (e) {
      throw await this.damaged(fh, e);
    }
  }

  async write(data: Checkpoint): Promise<void> {
    await this.writeSnapshot(this.snapshot(data, this.unchanged), data.state.hot);
  }

  /** `ids`: the open messages, a live view (CheckpointSnapshot); listed here if not given. */
  snapshot(
    data: Checkpoint,
    unchanged: (id: string) => boolean,
    ids: Iterable<string> = Object.keys(data.state.hot),
  ): CheckpointSnapshot {
    this.bodies.moveAll(); // the last document's refs, before this one's are made
    const { hot: _listed, ...rest } = data.state; // its lines are written one by one
    // `hot` first, after two numbers: the document with an empty hot set splits right after its `"hot":{`.
    const id = randomBytes(8).toString('hex');
    const outline = JSON.stringify({
      format: data.format,
      journalN: data.journalN,
      checkpoint: id,
      state: { hot: {}, ...rest },
    });
    const split = outline.indexOf(HOT_OPEN) + HOT_OPEN.length;
    return {
      id,
      head: Buffer.from(`${outline.slice(0, split)}\n`),
      tail: Buffer.from(`${outline.slice(split)}\n`),
      ids,
      born: new Set(),
      unchanged,
      frozen: new Map(),
      written: new Set(),
    };
  }

  /** An event is about to change this open message: keep its line as the snapshot has it. */
  freeze(snapshot: CheckpointSnapshot, id: string, hot: HotMessage): void {
    if (!snapshot.born.has(id) && !snapshot.written.has(id) && !snapshot.frozen.has(id))
      snapshot.frozen.set(id, [this.lineOf(id, hot, snapshot.unchanged), factsOf(hot)]);
  }

  /**
   * Writes the snapshot's document, leaving out `skip` (messages archived since). `sliced`: the
   * bodies' refs move to it a slice per turn, so commits go on meanwhile (a checkpoint behind them).
   */
  async writeSnapshot(
    snapshot: CheckpointSnapshot,
    hot: Readonly<Record<string, HotMessage>>,
    skip: ReadonlySet<string> = new Set(),
    sliced = false,
  ): Promise<void> {
    const placed: [StoredMessage, number][] = [];
    const { born, written, frozen } = snapshot;
    const ids = function* () {
      for (const id of snapshot.ids) if (!born.has(id) && !skip.has(id) && hot[id]) yield id;
    };
    const index = new OpenIndexWriter();
    const sum = { crc32: 0 };
    this.bytesOnDisk = await replaceDurably(this.fs, this.path, async (fh) => {
      const bytes = await writeDocument(fh, snapshot, ids(), placed, index, sum, sliced, (id) => {
        const [line, facts] = frozen.get(id) ?? [this.lineOf(id, hot[id], snapshot.unchanged), hot[id]];
        written.add(id);
        frozen.delete(id);
        return [hot[id].message, line, facts];
      });
      // Every open message's line was read to be written: one still unparsed was left out of this
      // document, which must then not replace the one that holds it.
      const unparsed = this.restored?.lazy.pending ?? 0;
      if (unparsed > 0) throw new Error(`${unparsed} open messages were not written into the checkpoint`);
      return bytes;
    });
    // The new document is in place: new refs point into it, and the old ones move to it.
    this.bodies.replaced(this.path, placed);
    await this.writeIndex(index.finish(snapshot.id, this.bytesOnDisk, sum.crc32));
    if (!sliced) return this.bodies.moveAll();
    while (!this.bodies.move(MOVE_SLICE)) await new Promise((next) => setImmediate(next));
  }

  /** After its document: a crash between the two leaves an index naming the document before, not used. */
  private async writeIndex(file: Buffer): Promise<void> {
    try {
      await replaceDurably(this.fs, this.indexPath, async (fh) => (await writeAll(fh, file, 0), file.length));
    } catch (e) {
      this.onIndexError?.(e);
    }
  }

  private lineOf(id: string, hot: HotMessage, unchanged: (id: string) => boolean): Buffer {
    return (unchanged(id) && this.copied(hot.message, Buffer.from(bodyHead(id)))) || Buffer.from(entryLine(id, hot));
  }

  close(): void {
    this.bodies.close();
  }

  /**
   * The message's line in this document, without its separator, if it can be copied: unchanged,
   * and its body left here, so the line starts that many bytes before the body. A line written
   * anew costs the main thread ten times one copied, while commits wait.
   */
  private copied(m: StoredMessage, head: Buffer): Buffer | undefined {
    if (typeof m.body !== 'number') return undefined;
    const body = this.bodies.offsetOf(m.body);
    if (body === undefined || body < head.length) return undefined;
    const line = this.bodies.line(body - head.length);
    // Not where it should be (never, unless the file changed under us): written anew instead.
    if (line.length <= head.length || !line.subarray(0, head.length).equals(head)) return undefined;
    return line[line.length - 1] === COMMA ? line.subarray(0, -1) : line;
  }
}

function revived(doc: Checkpoint): Checkpoint {
  if (doc?.state) reviveState(doc.state);
  return doc;
}

/**
 * The document in the line layout, written a chunk at a time; its size in bytes. `placed`: each
 * message and where its body's literal went; `index`: where its line went, with its facts; `sum`: the
 * document's checksum, for its open index. `line`:
 * an open message, its line and its facts (frozen with the line, or the message to take them from).
 */
async function writeDocument(
  fh: StoreFile,
  snapshot: CheckpointSnapshot,
  ids: Iterable<string>,
  placed: [StoredMessage, number][],
  index: OpenIndexWriter,
  sum: { crc32: number },
  paced: boolean,
  line: (id: string) => [StoredMessage, Buffer, Buffer | HotMessage],
): Promise<number> {
  let bytes = 0;
  let unsynced = 0;
  /** Bytes put so far, flushed or pending. */
  let written = 0;
  let pending: Buffer[] = [];
  let pendingLength = 0;
  const flush = async () => {
    const buf = Buffer.concat(pending, pendingLength);
    pending = [];
    pendingLength = 0;
    await writeAll(fh, buf, bytes);
    sum.crc32 = crc32(buf, sum.crc32);
    bytes += buf.length;
    unsynced += buf.length;
    // Behind the commits, the document goes to the disk as it is written, not in one flush at its
    // end: the journal's fdatasync would wait behind that flush.
    if (paced && unsynced >= SYNC_EVERY) {
      await fh.datasync();
      unsynced = 0;
    }
  };
  // Synchronous, with a flush awaited once a chunk is pending: an await per line costs a third of a checkpoint's time.
  const put = (part: Buffer) => {
    written += part.length;
    pending.push(part);
    pendingLength += part.length;
  };
  put(snapshot.head);
  let first = true;
  let count = 0;
  let sliceAt = performance.now();
  for (const id of ids) {
    if (!first) put(SEPARATOR);
    first = false;
    const [m, text, facts] = line(id);
    placed.push([m, written + Buffer.byteLength(bodyHead(id))]);
    index.add(id, written, facts);
    put(text);
    // A flush is a turn of the event loop: commits go on between. Lines written anew cost ten times
    // those copied, so a chunk of them holds the commits too long: a slice is also cut by time.
    if (pendingLength >= CHUNK || (++count % 32 === 0 && performance.now() - sliceAt > SLICE_MS)) {
      await flush();
      sliceAt = performance.now();
    }
  }
  if (!first) put(LAST);
  put(snapshot.tail);
  await flush();
  return bytes;
}

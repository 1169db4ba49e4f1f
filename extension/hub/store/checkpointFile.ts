// lowdb adapter for the checkpoint document (state.json), written and read one open message at a
// time. The document is the same JSON as ever — any JSON reader parses it — laid out in lines: a
// short first line that opens the hot set (`{"format":1,"journalN":N,"state":{"hot":{`), one line
// per open message, and a last line that closes it and holds the rest of the state. Whole, with
// 100 000 open messages, it was a 70 MB string to build at every checkpoint and to parse at every
// start, and the parse set the hub's resident size. A document in the one-line layout earlier
// versions wrote (or edited by hand) is parsed whole, as it was.
import { open, readFile, type FileHandle } from 'node:fs/promises';
import type { Adapter } from 'lowdb';
import { dict, parseState } from '../bus/dict';
import type { BusState, HotMessage } from '../bus/model';
import { replaceDurably } from './durableJsonFile';
import { reviveHot, reviveState } from './revive';

export interface Checkpoint {
  format: number;
  journalN: number;
  state: BusState;
}

const HOT_OPEN = '"hot":{';
/** Bytes read or written at a time. */
const CHUNK = 1 << 20;

/** Every line of the file from `position`, holding a chunk and the line being read, not the file. */
async function* lines(fh: FileHandle, position: number): AsyncGenerator<string> {
  const read = Buffer.allocUnsafe(CHUNK); // one, reused: a fresh megabyte per read stayed in the malloc arena
  let parts: Buffer[] = []; // copies of the line so far, when it spans chunks
  for (;;) {
    const { bytesRead } = await fh.read(read, 0, CHUNK, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const chunk = read.subarray(0, bytesRead);
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      yield parts.length === 0 ? chunk.toString('utf8', start, nl) : Buffer.concat([...parts, chunk.subarray(start, nl)]).toString('utf8');
      parts = [];
      start = nl + 1;
    }
    if (start < chunk.length) parts.push(Buffer.from(chunk.subarray(start)));
  }
  if (parts.length > 0) yield Buffer.concat(parts).toString('utf8');
}

/** The first line, if the document is in the line layout: it ends where the hot set opens. */
async function firstLine(fh: FileHandle): Promise<string | undefined> {
  const head = Buffer.alloc(256); // it holds two numbers
  const { bytesRead } = await fh.read(head, 0, head.length, 0);
  const nl = head.subarray(0, bytesRead).indexOf(0x0a);
  const line = nl < 0 ? undefined : head.toString('utf8', 0, nl);
  return line?.endsWith(HOT_OPEN) ? line : undefined;
}

export class CheckpointFile implements Adapter<Checkpoint> {
  /** Size of the document last read or written; the store paces checkpoints by it. */
  bytesOnDisk = 0;

  constructor(readonly path: string) {}

  async read(): Promise<Checkpoint | null> {
    let fh: FileHandle;
    try {
      fh = await open(this.path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
    try {
      this.bytesOnDisk = (await fh.stat()).size;
      const first = await firstLine(fh);
      if (first === undefined) return parseState(await readFile(this.path, 'utf8'), revived);
      return await this.parseLines(first, lines(fh, Buffer.byteLength(first) + 1));
    } finally {
      await fh.close();
    }
  }

  private async parseLines(first: string, rest: AsyncGenerator<string>): Promise<Checkpoint> {
    const hot = dict<HotMessage>();
    for await (const line of rest) {
      // An entry line starts with its key (a JSON string); the last line closes the hot set.
      if (line.startsWith('}')) {
        const doc = revived(JSON.parse(`${first}${line}`) as Checkpoint);
        doc.state.hot = hot;
        return doc;
      }
      const entry = JSON.parse(`{${line.endsWith(',') ? line.slice(0, -1) : line}}`) as Record<string, HotMessage>;
      for (const id in entry) hot[id] = reviveHot(entry[id], id);
    }
    throw new SyntaxError(`${this.path} ends before its last line`);
  }

  async write(data: Checkpoint): Promise<void> {
    this.bytesOnDisk = await replaceDurably(this.path, (fh) => writeDocument(fh, data));
  }
}

function revived(doc: Checkpoint): Checkpoint {
  if (doc?.state) reviveState(doc.state);
  return doc;
}

/** The document in the line layout, written a chunk at a time; its size in bytes. */
async function writeDocument(fh: FileHandle, data: Checkpoint): Promise<number> {
  const { hot, ...rest } = data.state;
  // `hot` first, after two numbers: the document with an empty hot set splits right after its `"hot":{`.
  const outline = JSON.stringify({ format: data.format, journalN: data.journalN, state: { hot: {}, ...rest } });
  const split = outline.indexOf(HOT_OPEN) + HOT_OPEN.length;
  let bytes = 0;
  let pending: string[] = [];
  let pendingLength = 0;
  const flush = async () => {
    const buf = Buffer.from(pending.join(''), 'utf8');
    pending = [];
    pendingLength = 0;
    for (let at = 0; at < buf.length;) at += (await fh.write(buf, at, buf.length - at)).bytesWritten;
    bytes += buf.length;
  };
  const put = async (text: string) => {
    pending.push(text);
    pendingLength += text.length;
    if (pendingLength >= CHUNK) await flush();
  };
  await put(`${outline.slice(0, split)}\n`);
  const ids = Object.keys(hot);
  for (const [i, id] of ids.entries()) await put(`${JSON.stringify(id)}:${JSON.stringify(hot[id])}${i < ids.length - 1 ? ',' : ''}\n`);
  await put(`${outline.slice(split)}\n`);
  await flush();
  return bytes;
}

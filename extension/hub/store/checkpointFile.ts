// lowdb adapter for the checkpoint document (state.json), written and read one hot message at a
// time. The document is the same JSON as ever — any JSON reader parses it — laid out as a header
// line ending in `"hot":{`, one line per open message, and a closing line. Whole, with 100 000
// open messages, it was a 70 MB string to build at every checkpoint and to parse at every start,
// and the parse's garbage set the hub's resident size. A document in the older one-line layout
// (or edited by hand) is parsed whole.
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';
import type { BusState, HotMessage } from '../bus/model';
import { fsyncDir } from './durableJsonFile';
import { reviveHot, reviveState } from './revive';

export interface Checkpoint {
  format: number;
  journalN: number;
  state: BusState;
}

const HOT_OPEN = '"hot":{';
const CLOSE = '}}}';
/** Bytes read or written at a time. */
const CHUNK = 1 << 20;

/** Every line of the file, in order, holding a chunk and the line being read, not the file. */
async function* lines(fh: FileHandle): AsyncGenerator<string> {
  const read = Buffer.allocUnsafe(CHUNK); // one, reused: a fresh megabyte per read stayed in the malloc arena
  let parts: Buffer[] = []; // copies of the line so far, when it spans chunks
  for (;;) {
    const { bytesRead } = await fh.read(read, 0, CHUNK, null);
    if (bytesRead === 0) break;
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
      return await this.parse(lines(fh));
    } finally {
      await fh.close();
    }
  }

  private async parse(from: AsyncGenerator<string>): Promise<Checkpoint> {
    const first = await from.next();
    if (first.done) throw new SyntaxError(`${this.path} is empty`);
    const header = first.value;
    if (!header.endsWith(HOT_OPEN)) {
      // The one-line layout, or any other: the rest of the file is part of the same document.
      let text = header;
      for await (const line of from) text += `\n${line}`;
      return revived(JSON.parse(text) as Checkpoint);
    }
    const doc = revived(JSON.parse(`${header}${CLOSE}`) as Checkpoint);
    const hot = doc.state.hot;
    let closed = false;
    for await (const line of from) {
      if (closed) {
        if (line.trim() !== '') throw new SyntaxError(`${this.path}: text after the end of the document`);
        continue;
      }
      if (line === CLOSE) {
        closed = true;
        continue;
      }
      const entry = JSON.parse(`{${line.endsWith(',') ? line.slice(0, -1) : line}}`) as Record<string, HotMessage>;
      for (const id in entry) hot[id] = reviveHot(entry[id], id);
    }
    if (!closed) throw new SyntaxError(`${this.path} ends before its last line`);
    return doc;
  }

  async write(data: Checkpoint): Promise<void> {
    const tmp = join(dirname(this.path), `.${basename(this.path)}.${process.pid}.tmp`);
    const fh = await open(tmp, 'w', 0o600);
    try {
      this.bytesOnDisk = await writeDocument(fh, data);
      await fh.sync();
    } catch (e) {
      await fh.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    await fh.close();
    await rename(tmp, this.path);
    await fsyncDir(dirname(this.path));
  }
}

function revived(doc: Checkpoint): Checkpoint {
  if (doc?.state) reviveState(doc.state);
  return doc;
}

/** The document in the line layout, written a chunk at a time; its size in bytes. */
async function writeDocument(fh: FileHandle, data: Checkpoint): Promise<number> {
  const { hot, ...rest } = data.state;
  // `hot` last, so the header is the document with an empty hot set, cut to end in `"hot":{`.
  const header = JSON.stringify({ format: data.format, journalN: data.journalN, state: { ...rest, hot: {} } });
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
  await put(`${header.slice(0, -CLOSE.length)}\n`);
  const ids = Object.keys(hot);
  for (const [i, id] of ids.entries()) await put(`${JSON.stringify(id)}:${JSON.stringify(hot[id])}${i < ids.length - 1 ? ',' : ''}\n`);
  await put(`${CLOSE}\n`);
  await flush();
  return bytes;
}

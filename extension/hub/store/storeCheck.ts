// `handoff store check` and `repair`: the damage in each file of a store, and — only when asked —
// a copy of each damaged file kept beside it, then the file written anew without its damaged
// lines, every good line kept (SQLite's integrity_check apart from any repair).
import { crc32 } from 'node:zlib';
import { dirname, join } from 'node:path';
import { CheckpointFile } from './checkpointFile';
import { replaceDurably } from './replaceDurably';
import { readLines } from './lineReader';
import { reframe } from './logLine';
import { HEADER, parseHeader, type IndexHeader } from './segmentIndex';
import { scanLog, type Damage } from './logScan';
import { StoreDamage } from './storeDamage';
import { nodeFs, writeAll, type StoreFile, type StoreFs } from './storeFs';

export const LOGS = ['archive.ndjson', 'journal.ndjson', 'journal.2.ndjson'];
export const CHECKPOINT = 'state.json';
const HISTORY = 'history';

export interface FileCheck {
  path: string;
  missing?: boolean;
  damage?: Damage;
  /** A torn tail the hub's next start cuts by itself (nothing acknowledged is in it). */
  torn?: { at: number; records: number };
  records?: number;
  /** A history segment sealed with its index: dropping a line would leave the index pointing past it. */
  indexed?: boolean;
}

/** `fs`: the store's own seam (storeFs.ts), so the power-cut tests cut a repair too. */
export async function checkStore(dir: string, fs: StoreFs = nodeFs): Promise<FileCheck[]> {
  const out: FileCheck[] = [await checkCheckpoint(fs, join(dir, CHECKPOINT))];
  for (const name of LOGS) out.push(await checkLog(fs, join(dir, name)));
  const history = (await fs.list(join(dir, HISTORY)).catch(() => [])).sort();
  for (const name of history) {
    const path = join(dir, HISTORY, name);
    if (name.endsWith('.ndjson'))
      out.push({ ...(await checkLog(fs, path)), indexed: history.includes(name.replace(/ndjson$/, 'idx')) });
    else if (name.endsWith('.idx')) out.push(await checkIndex(fs, path));
  }
  return out;
}

/** A segment's index, read whole (it is bounded): its header and the checksum of the rest. */
async function checkIndex(fs: StoreFs, path: string): Promise<FileCheck> {
  const buf = await fs.readFile(path);
  const header = parseHeader(buf, buf.length);
  const why =
    typeof header === 'string'
      ? header
      : crc32(buf.subarray(HEADER)) !== header.bodyCrc
        ? 'its checksum does not match'
        : undefined;
  if (why) return { path, damage: { path, offset: 0, why, badLines: 0, laterRecords: 0, places: [] } };
  return { path, records: (header as IndexHeader).count };
}

async function checkLog(fs: StoreFs, path: string): Promise<FileCheck> {
  const fh = await openOrMissing(fs, path);
  if (!fh) return { path, missing: true };
  try {
    let records = 0;
    const scan = await scanLog(
      path,
      fh,
      (v: unknown) => v,
      () => records++,
    );
    if (scan.damage) return { path, damage: scan.damage, records };
    return { path, records, torn: scan.torn && { at: scan.good, records: scan.torn.records } };
  } finally {
    await fh.close();
  }
}

async function checkCheckpoint(fs: StoreFs, path: string): Promise<FileCheck> {
  const file = new CheckpointFile(path, fs);
  try {
    const doc = await file.read();
    if (!doc) return { path, missing: true };
    return { path, records: file.restored?.lazy.pending ?? Object.keys(doc.state.hot).length };
  } catch (e) {
    if (e instanceof StoreDamage) return { path, damage: e.damage };
    throw e;
  } finally {
    file.close();
  }
}

/** Whether a repair can drop what is damaged: not a checkpoint's first or last line, nor damage no line shows. */
export function repairable(check: FileCheck): boolean {
  if (!check.damage || check.indexed || check.path.endsWith('.idx')) return false;
  if (!check.path.endsWith(CHECKPOINT)) return true;
  return check.damage.places.every((p) => p.why.startsWith('an open message line'));
}

/** Copies the damaged file beside itself, then writes it anew without its damaged lines; the copy's path. */
export async function repairFile(check: FileCheck, stamp: string, fs: StoreFs = nodeFs): Promise<string> {
  const copy = `${check.path}.damaged-${stamp}`;
  await copyDurably(fs, check.path, copy);
  const fh = await fs.open(copy, 'read');
  try {
    const keep = check.path.endsWith(CHECKPOINT) ? checkpointLines(fh) : logLines(fh);
    await replaceDurably(fs, check.path, (out) => writeLines(out, keep));
  } finally {
    await fh.close();
  }
  // Its open index names the document as it was (by checksum, so one a cut leaves is not used
  // either): a start parses the new one whole.
  if (check.path.endsWith(CHECKPOINT)) await fs.unlink(`${check.path}.index`).catch(() => undefined);
  return copy;
}

/** The copy, its bytes and its name, on the disk before the file is changed. */
async function copyDurably(fs: StoreFs, from: string, to: string): Promise<void> {
  const src = await fs.open(from, 'read');
  try {
    const out = await fs.open(to, 'replace');
    try {
      const buf = Buffer.alloc(1 << 20);
      for (let at = 0; ;) {
        const n = await src.read(buf, 0, buf.length, at);
        if (n === 0) break;
        await writeAll(out, buf.subarray(0, n), at);
        at += n;
      }
      await out.sync();
    } finally {
      await out.close();
    }
  } finally {
    await src.close();
  }
  await fs.syncDir(dirname(to));
}

async function* logLines(fh: StoreFile): AsyncGenerator<string> {
  for await (const line of readLines(fh)) {
    const text = line.tooLong || line.unterminated ? undefined : reframe(line.bytes);
    if (text !== undefined) yield text;
  }
}

/** The document's lines but the open message lines that do not parse, each but the last followed by its comma. */
async function* checkpointLines(fh: StoreFile): AsyncGenerator<string> {
  let before: string | undefined; // an open message line, held until it is known whether another follows
  let first = true;
  for await (const line of readLines(fh)) {
    const text = line.bytes.toString('utf8');
    if (first || line.bytes[0] === 0x7d) {
      if (before !== undefined) yield before;
      before = undefined;
      yield text;
      first = false;
      continue;
    }
    const entry = text.endsWith(',') ? text.slice(0, -1) : text;
    try {
      JSON.parse(`{${entry}}`);
    } catch {
      continue;
    }
    if (before !== undefined) yield `${before},`;
    before = entry;
  }
}

async function writeLines(out: StoreFile, lines: AsyncIterable<string>): Promise<number> {
  let at = 0;
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async () => {
    const buf = Buffer.concat(pending);
    await writeAll(out, buf, at);
    at += buf.length;
    pending = [];
    size = 0;
  };
  for await (const line of lines) {
    const buf = Buffer.from(`${line}\n`);
    pending.push(buf);
    size += buf.length;
    if (size >= 1 << 20) await flush();
  }
  await flush();
  return at;
}

async function openOrMissing(fs: StoreFs, path: string): Promise<StoreFile | undefined> {
  try {
    return await fs.open(path, 'read');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

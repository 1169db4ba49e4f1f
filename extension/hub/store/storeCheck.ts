// `handoff store check` and `repair`: the damage in each file of a store, and — only when asked —
// a copy of each damaged file kept beside it, then the file written anew without its damaged
// lines, every good line kept (SQLite's integrity_check apart from any repair).
import { copyFile, readdir, readFile, unlink } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { CheckpointFile } from './checkpointFile';
import { replaceDurably } from './replaceDurably';
import { readLines } from './lineReader';
import { reframe } from './logLine';
import { HEADER, parseHeader, type IndexHeader } from './segmentIndex';
import { scanLog, type Damage } from './logScan';
import { StoreDamage } from './storeDamage';
import { nodeFs, writeAll, type StoreFile } from './storeFs';

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

export async function checkStore(dir: string): Promise<FileCheck[]> {
  const out: FileCheck[] = [await checkCheckpoint(join(dir, CHECKPOINT))];
  for (const name of LOGS) out.push(await checkLog(join(dir, name)));
  const history = (await readdir(join(dir, HISTORY)).catch(() => [])).sort();
  for (const name of history) {
    const path = join(dir, HISTORY, name);
    if (name.endsWith('.ndjson'))
      out.push({ ...(await checkLog(path)), indexed: history.includes(name.replace(/ndjson$/, 'idx')) });
    else if (name.endsWith('.idx')) out.push(await checkIndex(path));
  }
  return out;
}

/** A segment's index, read whole (it is bounded): its header and the checksum of the rest. */
async function checkIndex(path: string): Promise<FileCheck> {
  const buf = await readFile(path);
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

async function checkLog(path: string): Promise<FileCheck> {
  const fh = await openOrMissing(path);
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

async function checkCheckpoint(path: string): Promise<FileCheck> {
  const file = new CheckpointFile(path);
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
export async function repairFile(check: FileCheck, stamp: string): Promise<string> {
  const copy = `${check.path}.damaged-${stamp}`;
  await copyFile(check.path, copy);
  const fh = await nodeFs.open(copy, 'read');
  try {
    await fh.sync(); // the copy is on the disk before the file is changed
    const keep = check.path.endsWith(CHECKPOINT) ? checkpointLines(fh) : logLines(fh);
    await replaceDurably(nodeFs, check.path, (out) => writeLines(out, keep));
  } finally {
    await fh.close();
  }
  // Its open index names the document as it was: a start parses the new one whole.
  if (check.path.endsWith(CHECKPOINT)) await unlink(`${check.path}.index`).catch(() => undefined);
  return copy;
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

async function openOrMissing(path: string): Promise<StoreFile | undefined> {
  try {
    return await nodeFs.open(path, 'read');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

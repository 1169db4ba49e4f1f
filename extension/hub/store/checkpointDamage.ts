// Where a checkpoint document (checkpointFile.ts) is damaged. It is replaced whole by a rename once
// fsync'd, so a crash never tears it: any line that does not parse is damage, and so is a document
// whose bytes do not sum to the checksum its open index holds (damage inside a line that still
// parses). Read a chunk at a time, each line parsed and let go.
import { crc32 } from 'node:zlib';
import { readLines } from './lineReader';
import type { Damage } from './logScan';
import type { StoreFile } from './storeFs';

const NEWLINE = Buffer.from('\n');
const HOT_OPEN = '"hot":{';
const LISTED = 20;

/** The document's checksum, as its open index keeps it (openIndex.ts `documentCrc32`). */
export async function documentCrc32(fh: StoreFile, chunk = 1 << 20): Promise<number> {
  const buf = Buffer.allocUnsafe(chunk);
  let crc = 0;
  for (let at = 0; ;) {
    const n = await fh.read(buf, 0, chunk, at);
    if (n === 0) return crc;
    crc = crc32(buf.subarray(0, n), crc);
    at += n;
  }
}

/** The damage in the document at `path`, if any; `expectedCrc32`: what its open index says it sums to. */
export async function checkpointDamage(
  path: string,
  fh: StoreFile,
  expectedCrc32?: number,
): Promise<Damage | undefined> {
  const places: Damage['places'] = [];
  let badLines = 0;
  let good = 0;
  let head: string | undefined;
  let closed = false;
  let crc = 0;
  let end = 0;
  const bad = (at: number, length: number, why: string) => {
    badLines++;
    if (places.length < LISTED) places.push({ at, length, why });
  };
  for await (const line of readLines(fh)) {
    crc = crc32(line.bytes, crc);
    if (!line.unterminated) crc = crc32(NEWLINE, crc);
    end = line.at + line.length + (line.unterminated ? 0 : 1);
    if (line.tooLong) {
      bad(line.at, line.length, 'a line too long to be one the hub wrote');
      continue;
    }
    const text = line.bytes.toString('utf8');
    if (head === undefined) {
      head = text;
      // A document in the one-line layout of earlier versions is whole in its first line.
      if (!text.endsWith(HOT_OPEN))
        if (parses(text)) closed = true;
        else bad(line.at, line.length, 'its first line neither opens the open messages nor is the whole document');
    } else if (closed) bad(line.at, line.length, 'a line after the document ends');
    else if (line.bytes[0] === 0x7d) {
      closed = true;
      if (!parses(`${head}${text}`)) bad(line.at, line.length, 'its last line (the rest of the state) does not parse');
    } else if (!parses(`{${text.endsWith(',') ? text.slice(0, -1) : text}}`))
      bad(line.at, line.length, 'an open message line that does not parse');
    else if (badLines > 0) good++;
  }
  if (head !== undefined && !closed) bad(end, 0, 'it ends before its last line (cut short)');
  if (badLines === 0 && expectedCrc32 !== undefined && crc !== expectedCrc32)
    bad(0, 0, 'its bytes do not match the checksum its open index holds: a line that still parses was changed');
  if (badLines === 0) return undefined;
  return { path, offset: places[0].at, why: places[0].why, badLines, laterRecords: good, places };
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// Reads a log through and tells a torn tail from damage. A crash can only tear what was not yet
// acknowledged: the batches after the last fdatasync'd one — the last line, or with batches
// written concurrently (the journal), a line cut short, zeros where a write did not land, then
// whole lines of later batches. So the first bad line is a torn tail only if
//   - it has no newline before the end, or holds zeros (what a write that did not land leaves), and
//   - no line after it says, by its `synced` mark (logLine.ts), that the bad one had been synced,
//     and none after it is an unmarked line of an earlier version, which could say nothing.
// Anything else is damage: reported with its place, never cut.
import { parseLine } from './logLine';
import { readLines, type ReadOptions } from './lineReader';
import type { StoreFile } from './storeFs';

export interface LoadedLine<T> {
  value: T;
  offset: number;
  length: number;
}

export interface Damage {
  path: string;
  /** Where the first bad line starts. */
  offset: number;
  why: string;
  /** Lines that cannot be read, the first included: what a repair drops. */
  badLines: number;
  /** Good records after the first bad line. */
  laterRecords: number;
  /** The first bad lines' places, for the report. */
  places: { at: number; length: number; why: string }[];
}

export interface Scan {
  /** Where the last good line before any bad one ends. */
  good: number;
  /** A torn tail from `good`, and the unacknowledged records after it that go with it. */
  torn?: { records: number };
  damage?: Damage;
}

const LISTED = 20;

export interface ScanOptions<T> extends ReadOptions {
  /** Reads what `each` needs of a line without parsing it whole (logLine.ts parseLine). */
  quick?: (json: string) => T | undefined;
}

export async function scanLog<T>(
  path: string,
  fh: StoreFile,
  revive: (parsed: T) => T,
  each: (line: LoadedLine<T>) => void,
  options?: ScanOptions<T>,
): Promise<Scan> {
  let good = 0;
  let first: { at: number; why: string; zeros: boolean; unterminated: boolean } | undefined;
  const places: Damage['places'] = [];
  let badLines = 0;
  let records = 0;
  let unmarked = 0;
  let newestMark = -1;
  for await (const line of readLines(fh, 0, options)) {
    const zeros = () => (line.tooLong ? line.zeros : !line.bytes.some((b) => b !== 0));
    if (line.unterminated && zeros()) break; // the zeros written ahead of the journal's lines
    const parsed = line.tooLong ? { ok: false as const, why: 'a line too long to be one the store wrote' } : undefined;
    const result = parsed ?? parseLine(line.bytes, revive, options?.quick);
    if (result.ok && !line.unterminated) {
      if (!first) {
        each({ value: result.value, offset: line.at, length: line.length });
        good = line.at + line.length + 1;
      } else {
        records++;
        if (result.synced === undefined) unmarked++;
        else newestMark = Math.max(newestMark, result.synced);
      }
      continue;
    }
    const why = line.unterminated ? 'a line with no end' : result.ok ? 'not a line' : result.why;
    badLines++;
    if (places.length < LISTED) places.push({ at: line.at, length: line.length, why });
    first ??= {
      at: line.at,
      why,
      zeros: line.tooLong ? line.zeros : line.bytes.includes(0), // where a write did not land
      unterminated: line.unterminated,
    };
  }
  if (!first) return { good };
  const tornWrite = first.unterminated || first.zeros;
  if (tornWrite && newestMark <= first.at && unmarked === 0) return { good, torn: { records } };
  const why =
    newestMark > first.at
      ? `${first.why}, and a line written after it shows it had been synced whole`
      : unmarked > 0
        ? `${first.why}, followed by ${unmarked} line(s) of an earlier version, which carry no mark to tell a torn write by`
        : first.why;
  return { good, damage: { path, offset: first.at, why, badLines, laterRecords: records, places } };
}

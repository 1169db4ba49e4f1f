// Every line of a file with the byte offset it starts at, read a chunk at a time: memory holds a
// chunk and the line being read, never the file (a log of 2 GiB or more read with one `read` made
// Node abort). A line longer than `maxLine` is reported by its place and whether it was all zeros,
// not held: a hole or a run of garbage must not cost its size in memory.
import type { StoreFile } from './storeFs';

export const CHUNK = 1 << 20;
/** Far above any line the store writes (a 64 KiB body, JSON-escaped, in a record of a few events). */
export const MAX_LINE = 64 << 20;

export interface Line {
  /** The line without its newline; empty when `tooLong`. May be overwritten by the next chunk's read. */
  bytes: Buffer;
  at: number;
  length: number;
  /** No newline before the end of the file. */
  unterminated: boolean;
  tooLong: boolean;
  /** Only for a line too long to hold: every byte of it was zero. */
  zeros: boolean;
}

export interface ReadOptions {
  chunk?: number;
  maxLine?: number;
}

export async function* readLines(
  fh: StoreFile,
  position = 0,
  { chunk: chunkSize = CHUNK, maxLine = MAX_LINE }: ReadOptions = {},
): AsyncGenerator<Line> {
  const read = Buffer.allocUnsafe(chunkSize); // one, reused: a fresh megabyte per read stayed in the malloc arena
  let parts: Buffer[] = []; // copies of the line so far, when it spans chunks
  let held = 0;
  let lineAt = position;
  let tooLong = false;
  let zeros = true;
  const line = (bytes: Buffer, end: number, unterminated: boolean): Line => {
    const out = tooLong
      ? { bytes: Buffer.alloc(0), at: lineAt, length: end - lineAt, unterminated, tooLong, zeros }
      : { bytes, at: lineAt, length: bytes.length, unterminated, tooLong, zeros: false };
    parts = [];
    held = 0;
    tooLong = false;
    zeros = true;
    return out;
  };
  const keep = (piece: Buffer) => {
    if (!tooLong && held + piece.length > maxLine) {
      tooLong = true;
      zeros = parts.every(allZero);
      parts = [];
    }
    if (tooLong) zeros &&= allZero(piece);
    else {
      parts.push(Buffer.from(piece));
      held += piece.length;
    }
  };
  for (;;) {
    const bytesRead = await fh.read(read, 0, chunkSize, position);
    if (bytesRead === 0) break;
    const chunkAt = position;
    position += bytesRead;
    const chunk = read.subarray(0, bytesRead);
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, nl);
      if (parts.length > 0 || tooLong || piece.length > maxLine) keep(piece);
      yield line(parts.length === 0 && !tooLong ? piece : Buffer.concat(parts), chunkAt + nl, false);
      start = nl + 1;
      lineAt = chunkAt + start;
    }
    if (start < chunk.length) keep(chunk.subarray(start));
  }
  if (held > 0 || tooLong) yield line(Buffer.concat(parts), position, true);
}

const ZEROS = Buffer.alloc(64 * 1024);

function allZero(b: Buffer): boolean {
  for (let i = 0; i < b.length; i += ZEROS.length) {
    const part = b.subarray(i, i + ZEROS.length);
    if (!part.equals(ZEROS.subarray(0, part.length))) return false;
  }
  return true;
}

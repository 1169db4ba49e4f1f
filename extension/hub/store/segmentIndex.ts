// The index of a sealed history segment: one file beside it, written once (durably, then renamed
// into place) and never changed. Looked up with a few reads — a binary search — never read whole:
// memory holds its header only.
//   header   128 bytes: "HOFFIDX1", CRC-32 of the header's other bytes, counts, the byte range of
//            the data file it covers, whether that file is the legacy archive, the least and
//            greatest id, the CRC-32 of everything after the header (handoff store check), the
//            earliest and latest time its handoffs were archived (0 in an index of an earlier version)
//   ids      count × 48: id (32 bytes, zero-padded), offset (float64), length (uint32), 4 spare — sorted by id
//   terms    terms × 40: term (32 bytes, UTF-8, zero-padded, a longer one cut), first posting, postings (uint32) — sorted
//   postings uint32 each: a place in ids
// A term cut to 32 bytes finds a superset; the message read back is checked against the query.
import { crc32 } from 'node:zlib';
import type { StoreFileReader } from './storeFs';

const MAGIC = Buffer.from('HOFFIDX1');
export const HEADER = 128;

/** A segment's files: `000042.ndjson` (its lines) and `000042.idx` (their index). */
export const segmentFile = (n: number, ext: 'ndjson' | 'idx'): string => `${String(n).padStart(6, '0')}.${ext}`;
const ID = 32;
const ID_ROW = 48;
const TERM = 32;
const TERM_ROW = 40;

export interface IndexHeader {
  count: number;
  terms: number;
  postings: number;
  /** The data is the archive an earlier version wrote (archive.ndjson), this range of it. */
  legacy: boolean;
  from: number;
  to: number;
  minId: string;
  maxId: string;
  bodyCrc: number;
  /** When its handoffs were archived, earliest and latest (ms; 0: not recorded): what retention goes by. */
  firstAt: number;
  lastAt: number;
}

export interface IndexedLine {
  id: string;
  offset: number;
  length: number;
  terms: readonly string[];
  /** When it was archived (ms). */
  at: number;
}

export function indexSize(h: Pick<IndexHeader, 'count' | 'terms' | 'postings'>): number {
  return HEADER + h.count * ID_ROW + h.terms * TERM_ROW + h.postings * 4;
}

function key(text: string, width: number): Buffer {
  const out = Buffer.alloc(width);
  out.write(text, 0, 'utf8'); // cut at the width, whole characters only: Buffer.write never splits one
  return out;
}

/** The index file's bytes for these lines (of one segment), built in memory: a segment is bounded. */
export function buildIndex(
  lines: readonly IndexedLine[],
  range: { from: number; to: number; legacy: boolean },
): Buffer {
  const rows = lines.map((l) => ({ ...l, key: key(l.id, ID) })).sort((a, b) => Buffer.compare(a.key, b.key));
  const byTerm = new Map<string, number[]>();
  rows.forEach((r, place) => {
    const seen = new Set<string>();
    for (const t of r.terms) {
      const k = key(t, TERM).toString('latin1');
      if (seen.has(k)) continue;
      seen.add(k);
      let list = byTerm.get(k);
      if (!list) byTerm.set(k, (list = []));
      list.push(place);
    }
  });
  const terms = [...byTerm.keys()].sort((a, b) => Buffer.compare(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1')));
  const postings = terms.reduce((n, t) => n + byTerm.get(t)!.length, 0);
  const h = { count: rows.length, terms: terms.length, postings };
  const buf = Buffer.alloc(indexSize(h));
  let at = HEADER;
  for (const r of rows) {
    r.key.copy(buf, at);
    buf.writeDoubleLE(r.offset, at + ID);
    buf.writeUInt32LE(r.length, at + ID + 8);
    at += ID_ROW;
  }
  let first = 0;
  for (const t of terms) {
    const list = byTerm.get(t)!;
    Buffer.from(t, 'latin1').copy(buf, at);
    buf.writeUInt32LE(first, at + TERM);
    buf.writeUInt32LE(list.length, at + TERM + 4);
    at += TERM_ROW;
    first += list.length;
  }
  for (const t of terms)
    for (const p of byTerm.get(t)!) {
      buf.writeUInt32LE(p, at);
      at += 4;
    }
  MAGIC.copy(buf, 0);
  buf.writeUInt32LE(h.count, 12);
  buf.writeUInt32LE(h.terms, 16);
  buf.writeUInt32LE(h.postings, 20);
  buf[24] = range.legacy ? 1 : 0;
  buf.writeDoubleLE(range.from, 28);
  buf.writeDoubleLE(range.to, 36);
  if (rows.length > 0) {
    rows[0].key.copy(buf, 44);
    rows[rows.length - 1].key.copy(buf, 76);
  }
  buf.writeUInt32LE(crc32(buf.subarray(HEADER)), 108);
  const times = rows.map((r) => r.at).filter((t) => Number.isFinite(t) && t > 0);
  if (times.length > 0) {
    buf.writeDoubleLE(
      times.reduce((a, b) => Math.min(a, b)),
      112,
    );
    buf.writeDoubleLE(
      times.reduce((a, b) => Math.max(a, b)),
      120,
    );
  }
  buf.writeUInt32LE(crc32(buf.subarray(12, HEADER)), 8);
  return buf;
}

/** The header, or why it is not one (a file a crash left empty, or damage); `fileSize` checked if given. */
export function parseHeader(buf: Buffer, fileSize?: number): IndexHeader | string {
  if (buf.length < HEADER || !buf.subarray(0, 8).equals(MAGIC)) return 'not a history index';
  if (crc32(buf.subarray(12, HEADER)) !== buf.readUInt32LE(8)) return "its header's checksum does not match";
  const text = (at: number) => buf.toString('latin1', at, at + ID).replace(/\0+$/, '');
  const h: IndexHeader = {
    count: buf.readUInt32LE(12),
    terms: buf.readUInt32LE(16),
    postings: buf.readUInt32LE(20),
    legacy: buf[24] === 1,
    from: buf.readDoubleLE(28),
    to: buf.readDoubleLE(36),
    minId: text(44),
    maxId: text(76),
    bodyCrc: buf.readUInt32LE(108),
    firstAt: buf.readDoubleLE(112),
    lastAt: buf.readDoubleLE(120),
  };
  if (fileSize !== undefined && indexSize(h) !== fileSize)
    return `it holds ${fileSize} bytes, its header says ${indexSize(h)}`;
  return h;
}

/** Reads of one index file, a row at a time. */
export class IndexReader {
  private readonly row = Buffer.alloc(TERM_ROW + ID_ROW);

  constructor(
    private readonly file: StoreFileReader,
    readonly header: IndexHeader,
  ) {}

  private read(at: number, length: number): Buffer {
    const buf = this.row.subarray(0, length);
    if (this.file.read(buf, 0, length, at) !== length) throw new Error('a history index ended early');
    return buf;
  }

  /** The line of the id, or undefined: a binary search over the sorted ids. */
  find(id: string): { offset: number; length: number } | undefined {
    const want = key(id, ID);
    let lo = 0;
    let hi = this.header.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const row = this.read(HEADER + mid * ID_ROW, ID_ROW);
      const c = Buffer.compare(row.subarray(0, ID), want);
      if (c === 0) return { offset: row.readDoubleLE(ID), length: row.readUInt32LE(ID + 8) };
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** The line at a place in the sorted ids. */
  at(place: number): { offset: number; length: number } {
    const row = this.read(HEADER + place * ID_ROW, ID_ROW);
    return { offset: row.readDoubleLE(ID), length: row.readUInt32LE(ID + 8) };
  }

  /** Where the term's postings are and how many, or undefined: a binary search in the terms. */
  term(term: string): { first: number; count: number } | undefined {
    const want = key(term, TERM);
    const base = HEADER + this.header.count * ID_ROW;
    let lo = 0;
    let hi = this.header.terms - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const row = this.read(base + mid * TERM_ROW, TERM_ROW);
      const c = Buffer.compare(row.subarray(0, TERM), want);
      if (c < 0) lo = mid + 1;
      else if (c > 0) hi = mid - 1;
      else return { first: row.readUInt32LE(TERM), count: row.readUInt32LE(TERM + 4) };
    }
    return undefined;
  }

  /**
   * The postings of every term that begins with `prefix`, as one run: terms are sorted and their
   * postings follow in the same order, so the terms of a prefix have theirs side by side (a
   * place may be in it more than once). Two binary searches.
   */
  prefixed(prefix: string): { first: number; count: number } | undefined {
    const want = Buffer.from(prefix, 'utf8').subarray(0, TERM);
    const base = HEADER + this.header.count * ID_ROW;
    const row = (i: number) => this.read(base + i * TERM_ROW, TERM_ROW);
    /** The first term whose start compares above `limit` (-1: at or above the prefix; 0: above it). */
    const search = (limit: number) => {
      let lo = 0;
      let hi = this.header.terms;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (Buffer.compare(row(mid).subarray(0, want.length), want) <= limit) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    const start = search(-1);
    const end = search(0);
    if (start >= end) return undefined;
    const first = row(start).readUInt32LE(TERM);
    const last = row(end - 1);
    return { first, count: last.readUInt32LE(TERM) + last.readUInt32LE(TERM + 4) - first };
  }

  /** The places (in ids) of the lines that carry a term found with `term`. */
  postingsOf(t: { first: number; count: number }): number[] {
    const list = Buffer.alloc(t.count * 4);
    const base = HEADER + this.header.count * ID_ROW + this.header.terms * TERM_ROW;
    this.file.read(list, 0, list.length, base + t.first * 4);
    return Array.from({ length: t.count }, (_, i) => list.readUInt32LE(i * 4));
  }
}

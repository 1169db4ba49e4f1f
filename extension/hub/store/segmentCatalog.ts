// The catalog of sealed history segments (history/catalog): every sealed index's 128-byte header
// with its segment number, in one small file, so a start reads one file whatever the number of
// segments. It is derived data — each entry is a copy of an index's header, which has its own
// checksum — so it is replaced whole and durably (replaceDurably.ts) after the index it adds, may
// lag the folder (a crash after a seal), and when missing or damaged is rebuilt from the headers;
// damage of an index or a segment itself still stops the store (history.ts).
//   file  "HOFFCAT1", count (uint32), CRC-32 of the rows (uint32), then count rows:
//   row   segment number (uint32), the index's header (segmentIndex.ts HEADER bytes) — oldest first
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { replaceDurably } from './replaceDurably';
import { HEADER, parseHeader, type IndexHeader } from './segmentIndex';
import { writeAll, type StoreFs } from './storeFs';

const MAGIC = Buffer.from('HOFFCAT1');
const TOP = 16;
const ROW = 4 + HEADER;

export interface CatalogEntry {
  n: number;
  header: IndexHeader;
  /** The index's header as its file holds it: checked against the file at its first use. */
  raw: Buffer;
}

/** What a start did with the catalog: read as it was, caught up with segments sealed after it, or rebuilt. */
export type CatalogOpen = { read: number; added: number; dropped: number; rebuilt?: string };

function encode(entries: readonly CatalogEntry[]): Buffer {
  const buf = Buffer.alloc(TOP + entries.length * ROW);
  entries.forEach((e, i) => {
    buf.writeUInt32LE(e.n, TOP + i * ROW);
    e.raw.copy(buf, TOP + i * ROW + 4);
  });
  MAGIC.copy(buf, 0);
  buf.writeUInt32LE(entries.length, 8);
  buf.writeUInt32LE(crc32(buf.subarray(TOP)), 12);
  return buf;
}

/** The entries, or why the bytes are not a catalog. */
function decode(buf: Buffer): CatalogEntry[] | string {
  if (buf.length < TOP || !buf.subarray(0, 8).equals(MAGIC)) return 'not a history catalog';
  const count = buf.readUInt32LE(8);
  if (buf.length !== TOP + count * ROW) return `${buf.length} bytes for ${count} entries`;
  if (crc32(buf.subarray(TOP)) !== buf.readUInt32LE(12)) return 'its checksum does not match';
  const entries: CatalogEntry[] = [];
  for (let i = 0; i < count; i++) {
    const at = TOP + i * ROW;
    const raw = Buffer.from(buf.subarray(at + 4, at + ROW));
    const header = parseHeader(raw);
    if (typeof header === 'string') return `entry ${i}: ${header}`;
    entries.push({ n: buf.readUInt32LE(at), header, raw });
  }
  return entries;
}

export class SegmentCatalog {
  private constructor(
    private readonly fs: StoreFs,
    readonly path: string,
    private entries: CatalogEntry[],
  ) {}

  /**
   * The catalog of `dir`, made to agree with the indexes the folder holds (`onDisk`, from one
   * listing): entries whose index is gone are dropped (retention removed them), indexes it does
   * not list yet are read with `readHeader` (those sealed after its last write) — all of them if
   * it is missing or damaged. Written back, durably, if anything changed.
   */
  static async open(
    fs: StoreFs,
    dir: string,
    onDisk: readonly number[],
    readHeader: (n: number) => CatalogEntry,
  ): Promise<{ catalog: SegmentCatalog; opened: CatalogOpen }> {
    const path = join(dir, 'catalog');
    const stored = await readCatalog(fs, path);
    const listed = typeof stored === 'string' ? [] : stored;
    const present = new Set(onDisk);
    const kept = listed.filter((e) => present.has(e.n));
    const known = new Set(kept.map((e) => e.n));
    const added = onDisk.filter((n) => !known.has(n)).map(readHeader);
    const catalog = new SegmentCatalog(
      fs,
      path,
      [...kept, ...added].sort((a, b) => a.n - b.n),
    );
    const opened: CatalogOpen = {
      read: listed.length,
      added: added.length,
      dropped: listed.length - kept.length,
      ...(typeof stored === 'string' && { rebuilt: stored }),
    };
    if (opened.added > 0 || opened.dropped > 0 || (opened.rebuilt && onDisk.length > 0)) await catalog.save();
    return { catalog, opened };
  }

  /** Oldest first. */
  list(): readonly CatalogEntry[] {
    return this.entries;
  }

  /** Segments sealed: listed once their indexes are in place (renamed), durably. */
  async add(entries: readonly CatalogEntry[]): Promise<void> {
    const adding = new Set(entries.map((e) => e.n));
    this.entries = [...this.entries.filter((e) => !adding.has(e.n)), ...entries].sort((a, b) => a.n - b.n);
    await this.save();
  }

  /** Segments that go (retention): unlisted durably — call before their files are deleted. */
  async remove(ns: readonly number[]): Promise<void> {
    const gone = new Set(ns);
    this.entries = this.entries.filter((e) => !gone.has(e.n));
    await this.save();
  }

  private async save(): Promise<void> {
    const buf = encode(this.entries);
    await replaceDurably(this.fs, this.path, async (file) => {
      await writeAll(file, buf, 0);
      return buf.length;
    });
  }
}

/** The stored entries, or why there are none to trust (missing, damaged): the caller rebuilds. */
async function readCatalog(fs: StoreFs, path: string): Promise<CatalogEntry[] | string> {
  let file;
  try {
    file = await fs.open(path, 'read');
  } catch {
    return 'missing';
  }
  try {
    const size = await file.size();
    if ((size - TOP) % ROW !== 0 || size < TOP) return `${size} bytes, not a whole catalog`;
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const n = await file.read(buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return decode(buf.subarray(0, got));
  } finally {
    await file.close();
  }
}

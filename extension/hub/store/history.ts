// Settled handoffs, off the start path: history/ holds segments of bounded size (NNNNNN.ndjson,
// the archive's lines), and each full one an index of its own (NNNNNN.idx, segmentIndex.ts),
// written durably before the next segment is made. A start reads the catalog of the indexes' headers
// (segmentCatalog.ts, one file whatever their number) and the one segment still being written, never
// the rest: an old handoff is found by a binary search in the index whose id range holds it, then
// one read of its line (whose CRC and id are checked). An index and its segment are checked against
// the catalog at their first use.
// The archive.ndjson an earlier version wrote stays where it is, read-only: at the first start it
// is checked through and indexed in ranges of the segment size (legacy indexes), a chunk at a time.
import { join } from 'node:path';
import { termGroups, termsOf, matches, type HistoryQuery } from '../bus/historyQuery';
import { AppendLog } from './appendLog';
import { readLines } from './lineReader';
import { parseLine } from './logLine';
import { reviveHot } from './revive';
import { SegmentCatalog, type CatalogEntry, type CatalogOpen } from './segmentCatalog';
import { buildIndex, HEADER, IndexReader, indexSize, parseHeader, segmentFile, type IndexedLine } from './segmentIndex';
import { finishDrop } from './dropRecord';
import { StoreDamage } from './storeDamage';
import { makeDurableDir, writeAll, type StoreFs } from './storeFs';
import type { HotMessage, Message } from '../bus/model';

/** Settled, out of the hot set: its body is written into the archive with it. */
export interface ArchivedMessage extends HotMessage {
  message: Message;
  archivedAt: number;
}

/** Small enough that the segment being written is read through at start in a few ms, large enough that 1 000 000 handoffs make a few hundred. */
export const SEGMENT_BYTES = 4 * 1024 * 1024;

export type Sealed = CatalogEntry;

type Place = { offset: number; length: number };

export interface HistoryOptions {
  fs: StoreFs;
  segmentBytes?: number;
  onTorn?: (path: string, at: number, records: number) => void;
  /** What the start did with the catalog (tests; a rebuild is slow once, never a loss). */
  onCatalog?: (opened: CatalogOpen) => void;
  /** A segment was sealed: retention may drop the oldest (retention.ts). */
  onSealed?: () => void;
}

const ID_FIRST = '{"message":{"id":"';

/**
 * A start needs only each line's id from the segment being written: read where the store writes
 * it (the record's first field, the message's first), not by parsing up to 4 MiB of JSON; a line
 * of another shape, or an id with an escape, is parsed whole. Only its id is there.
 */
function idOnly(json: string): ArchivedMessage | undefined {
  if (!json.startsWith(ID_FIRST)) return undefined;
  const end = json.indexOf('"', ID_FIRST.length);
  const id = json.slice(ID_FIRST.length, end);
  return end > 0 && !id.includes('\\') ? ({ message: { id } } as ArchivedMessage) : undefined;
}

/** A history file that is not as it was written: the store is not opened, nothing is changed. */
const damaged = (path: string, why: string) =>
  StoreDamage.ofFile(path, why, 'is damaged', 'run `handoff store check` on it');

export class History {
  /** The sealed segments, oldest first. */
  catalog!: SegmentCatalog;
  /** Sealed segments whose index and data were checked against the catalog since the start. */
  private readonly checked = new Set<number>();
  /** The segment being written: every line's place, by id (bounded by the segment size). */
  private readonly recent = new Map<string, Place>();
  /** The ids of the segment sealed last: with `recent`, the window a duplicate is told by at once. */
  private previous = new Set<string>();
  private active!: AppendLog<ArchivedMessage>;
  private activeN = 0;
  private readonly segmentBytes: number;

  private constructor(
    readonly dir: string,
    private readonly legacyPath: string,
    private readonly options: HistoryOptions,
  ) {
    this.segmentBytes = options.segmentBytes ?? SEGMENT_BYTES;
  }

  static async open(storeDir: string, options: HistoryOptions): Promise<History> {
    const h = new History(join(storeDir, 'history'), join(storeDir, 'archive.ndjson'), options);
    const fs = options.fs;
    await makeDurableDir(fs, h.dir);
    await finishDrop(fs, h.dir, h.legacyPath); // a drop a crash cut short, before anything is read
    const names = await fs.list(h.dir);
    const data = new Set<number>();
    const idx: number[] = [];
    for (const file of names) {
      const m = /^(\d{6})\.(ndjson|idx)$/.exec(file);
      if (m?.[2] === 'idx') idx.push(Number(m[1]));
      else if (m) data.add(Number(m[1]));
      else if (file.endsWith('.idx.new'))
        await fs.unlink(join(h.dir, file)); // a seal a crash cut short
      else if (/^\.catalog\..*\.tmp$/.test(file)) await fs.unlink(join(h.dir, file)); // a catalog write a crash cut short
    }
    const { catalog, opened } = await SegmentCatalog.open(
      fs,
      h.dir,
      idx.sort((a, b) => a - b),
      (n) => h.readHeader(n),
    );
    h.catalog = catalog;
    options.onCatalog?.(opened);
    const indexed = new Set(idx);
    const last = [...data, ...idx].reduce((a, b) => Math.max(a, b), 0);
    for (const n of data)
      if (n !== last && !indexed.has(n))
        throw damaged(join(h.dir, segmentFile(n, 'ndjson')), 'a full segment without its index');
    await h.migrateLegacy(data.size > 0 || h.sealed.some((x) => !x.header.legacy));
    h.activeN = data.has(last) && !indexed.has(last) ? last : Math.max(last, h.sealed.at(-1)?.n ?? 0) + 1;
    await h.openActive();
    const before = h.sealed.at(-1);
    if (before) h.previous = new Set(h.idsOf(before));
    return h;
  }

  private get sealed(): readonly Sealed[] {
    return this.catalog.list();
  }

  private idxOf(s: Sealed): string {
    return join(this.dir, segmentFile(s.n, 'idx'));
  }

  private dataOf(s: Sealed): string {
    return s.header.legacy ? this.legacyPath : join(this.dir, segmentFile(s.n, 'ndjson'));
  }

  /** An index's header, checked (with its size and its data's), for a segment the catalog does not list yet. */
  private readHeader(n: number): Sealed {
    const path = join(this.dir, segmentFile(n, 'idx'));
    const raw = Buffer.alloc(HEADER);
    const header = this.checkIndex(path, raw);
    if (typeof header === 'string') throw damaged(path, header);
    const sealed = { n, header, raw };
    this.checkData(sealed);
    this.checked.add(n);
    return sealed;
  }

  /** The header read into `raw`, its checksum and the file's size checked; or why not. */
  private checkIndex(path: string, raw: Buffer) {
    const file = this.options.fs.openReader(path);
    try {
      const got = file.read(raw, 0, HEADER, 0);
      const parsed = parseHeader(raw.subarray(0, got));
      if (typeof parsed === 'string') return parsed;
      // The size, without a stat: its last byte is there and nothing after it.
      const end = indexSize(parsed);
      const one = Buffer.alloc(1);
      if (file.read(one, 0, 1, end - 1) !== 1 || file.read(one, 0, 1, end) !== 0)
        return `not the ${end} bytes its header says`;
      return parsed;
    } finally {
      file.close();
    }
  }

  /** A listed segment at its first use: its index is the one the catalog copied, its data all there. */
  private checkListed(s: Sealed): void {
    if (this.checked.has(s.n)) return;
    const path = this.idxOf(s);
    const raw = Buffer.alloc(HEADER);
    let why;
    try {
      why = this.checkIndex(path, raw);
    } catch {
      why = 'missing';
    }
    if (typeof why === 'string') throw damaged(path, why);
    if (!raw.equals(s.raw))
      throw damaged(path, `its header is not the one ${this.catalog.path} lists (the catalog is derived: delete it)`);
    this.checkData(s);
    this.checked.add(s.n);
  }

  /** The data an index covers is all there (its last byte), or its lines were lost: damage. */
  private checkData(s: Sealed): void {
    const path = this.dataOf(s);
    let data;
    try {
      data = this.options.fs.openReader(path);
    } catch {
      throw damaged(path, `missing, and ${this.idxOf(s)} indexes ${s.header.count} handoffs in it`);
    }
    try {
      if (s.header.to > 0 && data.read(Buffer.alloc(1), 0, 1, s.header.to - 1) !== 1)
        throw damaged(path, `shorter than the ${s.header.to} bytes ${this.idxOf(s)} indexes`);
    } finally {
      data.close();
    }
  }

  private async openActive(): Promise<void> {
    this.active = new AppendLog<ArchivedMessage>(
      join(this.dir, segmentFile(this.activeN, 'ndjson')),
      reviveHot,
      0,
      this.options.fs,
    );
    await this.active.open(
      (line) => this.recent.set(line.value.message.id, { offset: line.offset, length: line.length }),
      (at, records) => this.options.onTorn?.(this.active.path, at, records),
      { quick: idOnly },
    );
  }

  /**
   * The archive an earlier version wrote: checked through once (a torn tail cut, damage refused,
   * as for any log), then indexed in ranges, each index written durably before the next is begun,
   * so a start cut short goes on from the last one.
   */
  private async migrateLegacy(segments: boolean): Promise<void> {
    const fs = this.options.fs;
    let size: number;
    try {
      const fh = await fs.open(this.legacyPath, 'read');
      size = await fh.size();
      await fh.close();
    } catch {
      return; // none
    }
    const covered = Math.max(0, ...this.sealed.filter((s) => s.header.legacy).map((s) => s.header.to));
    if (covered >= size) return;
    if (segments) throw damaged(this.legacyPath, `bytes past ${covered} that no history index covers`);
    if (covered === 0) {
      const check = new AppendLog<ArchivedMessage>(this.legacyPath, reviveHot, 0, fs);
      await check.open(
        () => undefined,
        (at, records) => this.options.onTorn?.(this.legacyPath, at, records),
      );
      size = check.bytes;
      await check.close();
    }
    const fh = await fs.open(this.legacyPath, 'read');
    try {
      let n = (this.sealed.at(-1)?.n ?? 0) + 1;
      let from = covered;
      let lines = new Map<string, IndexedLine>();
      const indexed: Sealed[] = [];
      const seal = async (to: number) => {
        indexed.push(await this.writeIndex(n++, [...lines.values()], { from, to, legacy: true }));
        await fs.syncDir(this.dir); // its rename durable before the next range is begun
        lines = new Map();
        from = to;
      };
      for await (const line of readLines(fh, covered)) {
        if (line.at >= size || line.unterminated) break;
        const parsed = parseLine<ArchivedMessage>(line.bytes, reviveHot);
        if (!parsed.ok) throw damaged(this.legacyPath, `at byte ${line.at}: ${parsed.why}`);
        const m = parsed.value.message;
        lines.set(m.id, {
          id: m.id,
          offset: line.at,
          length: line.length,
          terms: termsOf(m),
          at: parsed.value.archivedAt,
        });
        const end = line.at + line.length + 1;
        if (end - from >= this.segmentBytes) await seal(end);
      }
      if (lines.size > 0) await seal(size);
      if (indexed.length > 0) await this.catalog.add(indexed); // once: a start cut short lists the rest from the folder
    } finally {
      await fh.close();
    }
  }

  /**
   * Written to a new name, synced, renamed into place: whole or not there. The rename is made
   * durable by the fsync of the folder that makes the catalog listing it durable, which always
   * follows; until then this segment is the last one, read as the one being written.
   */
  private async writeIndex(
    n: number,
    lines: IndexedLine[],
    range: { from: number; to: number; legacy: boolean },
  ): Promise<Sealed> {
    const fs = this.options.fs;
    const path = join(this.dir, segmentFile(n, 'idx'));
    const buf = buildIndex(lines, range);
    const fh = await fs.open(`${path}.new`, 'replace');
    try {
      await writeAll(fh, buf, 0);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(`${path}.new`, path);
    const raw = Buffer.from(buf.subarray(0, HEADER));
    this.checked.add(n);
    return { n, header: parseHeader(raw) as Sealed['header'], raw };
  }

  /** The segment being written is full: its index is written, then the next segment begun. */
  private async seal(): Promise<void> {
    const fh = await this.options.fs.open(this.active.path, 'read');
    const lines: IndexedLine[] = [];
    try {
      for await (const line of readLines(fh, 0)) {
        if (line.unterminated) break;
        const parsed = parseLine<ArchivedMessage>(line.bytes, reviveHot);
        if (!parsed.ok) throw damaged(this.active.path, `at byte ${line.at}: ${parsed.why}`);
        const m = parsed.value.message;
        // Only the copy the segment's map points to: one moved back to the hot set is not history (yet).
        if (this.recent.get(m.id)?.offset === line.at)
          lines.push({
            id: m.id,
            offset: line.at,
            length: line.length,
            terms: termsOf(m),
            at: parsed.value.archivedAt,
          });
      }
    } finally {
      await fh.close();
    }
    await this.catalog.add([
      await this.writeIndex(this.activeN, lines, { from: 0, to: this.active.bytes, legacy: false }),
    ]);
    this.previous = new Set(this.recent.keys());
    this.recent.clear();
    await this.active.close();
    this.activeN++;
    await this.openActive();
    this.options.onSealed?.();
  }

  /** The sealed segments, oldest first; never the one being written (retention.ts picks from these). */
  get segments(): readonly Sealed[] {
    return this.sealed;
  }

  /** The segment being written: its size. */
  get activeBytes(): number {
    return this.active.bytes;
  }

  /** Retention is removing the oldest `k` sealed segments: the catalog, lookups and searches leave them out from now on. */
  async forgetOldest(k: number): Promise<void> {
    const last = this.sealed.length === k;
    await this.catalog.remove(this.sealed.slice(0, k).map((s) => s.n));
    if (last) this.previous.clear(); // the window's ids went with them
  }

  /**
   * Appends settled messages, durably: one write and one fdatasync per segment they go into, a
   * full segment sealed before the next is begun, so no segment grows far past its size however
   * many settle at once.
   */
  async append(rows: ArchivedMessage[]): Promise<void> {
    for (let i = 0; i < rows.length;) {
      if (this.active.bytes >= this.segmentBytes) await this.seal();
      let room = this.segmentBytes - this.active.bytes;
      let end = i;
      do room -= JSON.stringify(rows[end++]).length;
      while (end < rows.length && room > 0);
      const batch = rows.slice(i, end);
      const places = await this.active.writeBatch(batch);
      batch.forEach((r, k) => this.recent.set(r.message.id, places[k]));
      i = end;
    }
  }

  /** Written into the segment being written (and not taken back since). */
  holds(id: string): boolean {
    return this.recent.has(id);
  }

  /** A message written at this checkpoint stays open after all: its line is not its history. */
  forget(id: string): void {
    this.recent.delete(id);
  }

  /** In the recent window (this segment and the one before): told without a read. */
  knowsRecent(id: string): boolean {
    return this.recent.has(id) || this.previous.has(id);
  }

  get count(): number {
    return this.sealed.reduce((n, s) => n + s.header.count, this.recent.size);
  }

  has(id: string): boolean {
    return this.recent.has(id) || this.locate(id) !== undefined;
  }

  /** The newest copy of the message, or undefined. */
  async get(id: string): Promise<ArchivedMessage | undefined> {
    const place = this.recent.get(id);
    if (place) return this.active.readAt(place.offset, place.length);
    const found = this.locate(id);
    return found && this.readLine(found.segment, found.place, id);
  }

  private locate(id: string): { segment: Sealed; place: Place } | undefined {
    for (let i = this.sealed.length - 1; i >= 0; i--) {
      const s = this.sealed[i];
      if (id < s.header.minId || id > s.header.maxId) continue;
      const place = this.withIndex(s, (r) => r.find(id));
      if (place) return { segment: s, place };
    }
    return undefined;
  }

  private withIndex<T>(s: Sealed, use: (r: IndexReader) => T): T {
    this.checkListed(s);
    const file = this.options.fs.openReader(this.idxOf(s));
    try {
      return use(new IndexReader(file, s.header));
    } finally {
      file.close();
    }
  }

  private idsOf(s: Sealed): string[] {
    this.checkListed(s);
    const ids: string[] = [];
    const file = this.options.fs.openReader(this.idxOf(s));
    try {
      const rows = Buffer.alloc(s.header.count * 48);
      file.read(rows, 0, rows.length, HEADER);
      for (let i = 0; i < s.header.count; i++)
        ids.push(rows.toString('latin1', i * 48, i * 48 + 32).replace(/\0+$/, ''));
    } finally {
      file.close();
    }
    return ids;
  }

  private readLine(s: Sealed, place: Place, id?: string): ArchivedMessage {
    const data = this.dataOf(s);
    const file = this.options.fs.openReader(data);
    try {
      const buf = Buffer.alloc(place.length);
      const got = file.read(buf, 0, place.length, place.offset);
      const line = parseLine<ArchivedMessage>(buf.subarray(0, got), reviveHot);
      if (!line.ok) throw damaged(data, `at byte ${place.offset}: ${line.why}`);
      if (id !== undefined && line.value.message.id !== id)
        throw damaged(
          this.idxOf(s),
          `it places ${id} at byte ${place.offset} of ${data}, which holds ${line.value.message.id}`,
        );
      return line.value;
    } finally {
      file.close();
    }
  }

  /**
   * Settled messages that answer the query, newest first, at most `q.limit`: in each sealed
   * segment only the lines whose index lists a term of every group (historyQuery.ts) are read;
   * the segment being written is read through (it is bounded).
   */
  async search(q: HistoryQuery): Promise<ArchivedMessage[]> {
    const out: ArchivedMessage[] = [];
    const fh = await this.options.fs.open(this.active.path, 'read');
    try {
      const found: ArchivedMessage[] = [];
      for await (const line of readLines(fh, 0)) {
        if (line.unterminated || line.at >= this.active.bytes) break;
        const parsed = parseLine<ArchivedMessage>(line.bytes, reviveHot);
        if (!parsed.ok) continue; // damage here stops the next start, not a search
        const v = parsed.value;
        if (this.recent.get(v.message.id)?.offset === line.at && matches(q, v.message, v.deliveries, true))
          found.push(v);
      }
      out.push(...found.reverse().slice(0, q.limit));
    } finally {
      await fh.close();
    }
    const groups = termGroups(q);
    for (let i = this.sealed.length - 1; i >= 0 && out.length < q.limit; i--) {
      const s = this.sealed[i];
      this.withIndex(s, (r) => {
        let places: number[];
        if (groups.length === 0) places = Array.from({ length: s.header.count }, (_, k) => k);
        else {
          // The rarest group first; a group far commoner than what is left (the viewer's own name,
          // in a history that is all theirs) is not read: the lines read are checked whole anyway.
          const sized = groups
            .map((group) => group.flatMap((t) => (typeof t === 'string' ? r.term(t) : r.prefixed(t.prefix)) ?? []))
            .map((terms) => ({ terms, size: terms.reduce((n, t) => n + t.count, 0) }))
            .sort((a, b) => a.size - b.size);
          let common: Set<number> | undefined;
          for (const { terms, size } of sized) {
            if (common && size > common.size * 16) break;
            const any = new Set(terms.flatMap((t) => r.postingsOf(t)));
            common = common ? new Set([...common].filter((p) => any.has(p))) : any;
            if (common.size === 0) break;
          }
          places = [...(common ?? [])];
        }
        places.sort((a, b) => b - a); // sorted ids are ULIDs: the newest last
        for (const p of places) {
          if (out.length >= q.limit) break;
          const v = this.readLine(s, r.at(p));
          if (matches(q, v.message, v.deliveries, true)) out.push(v);
        }
      });
    }
    return out;
  }

  /**
   * The `n` settled last (newest archived first, each once): the segment being written from its
   * end, then each sealed one from its newest id. At most `n` lines read, however long the history.
   */
  async newest(n: number): Promise<ArchivedMessage[]> {
    const out: ArchivedMessage[] = [];
    const seen = new Set<string>();
    const keep = (v: ArchivedMessage) => {
      if (seen.has(v.message.id)) return;
      seen.add(v.message.id);
      out.push(v);
    };
    const places = [...this.recent.values()];
    for (let i = places.length - 1; i >= 0 && out.length < n; i--)
      keep(await this.active.readAt(places[i].offset, places[i].length));
    for (let i = this.sealed.length - 1; i >= 0 && out.length < n; i--) {
      const s = this.sealed[i];
      this.withIndex(s, (r) => {
        for (let p = s.header.count - 1; p >= 0 && out.length < n; p--) keep(this.readLine(s, r.at(p)));
      });
    }
    return out;
  }

  /**
   * Every handoff of history from a place on, in the order they were written (settled), a chunk
   * at a time: sealed segments, then the one being written. `skip` leaves out a sealed segment by
   * when its newest handoff was archived. Each comes with the place after it, where a later read goes on.
   * A segment retention drops while it is read is left there: `dropped` is told the handoffs of it
   * not read (a read of its index would find the file gone).
   */
  async *lines(
    from: { n: number; offset: number },
    skip: (lastAt: number) => boolean = () => false,
    dropped: (handoffs: number) => void = () => undefined,
  ): AsyncGenerator<{ value: ArchivedMessage; next: { n: number; offset: number } }> {
    const active = { n: this.activeN, from: 0, to: this.active.bytes };
    for (const s of [...this.sealed, undefined]) {
      const n = s?.n ?? active.n;
      if (n < from.n || (s && skip(s.header.lastAt))) continue;
      const range = s ? s.header : active;
      const gone = () => s !== undefined && !this.sealed.some((x) => x.n === s.n);
      const fh = await this.options.fs.open(s ? this.dataOf(s) : this.active.path, 'read').catch(() => undefined);
      if (!fh || gone()) {
        await fh?.close();
        if (s) dropped(s.header.count); // dropped by retention since
        continue;
      }
      let read = 0;
      try {
        for await (const line of readLines(fh, n === from.n ? Math.max(from.offset, range.from) : range.from)) {
          if (line.unterminated || line.at >= range.to) break;
          const parsed = parseLine<ArchivedMessage>(line.bytes, reviveHot);
          if (!parsed.ok) throw damaged(s ? this.dataOf(s) : this.active.path, `at byte ${line.at}: ${parsed.why}`);
          const id = parsed.value.message.id;
          // Only the copy its segment's index (or map) points to: one taken back to the hot set is not history.
          let at;
          try {
            at = s ? this.withIndex(s, (r) => r.find(id)) : this.recent.get(id);
          } catch (e) {
            if (!gone()) throw e;
            dropped(Math.max(0, s!.header.count - read));
            break;
          }
          read++;
          if (at?.offset === line.at) yield { value: parsed.value, next: { n, offset: line.at + line.length + 1 } };
        }
      } finally {
        await fh.close();
      }
    }
  }

  async close(): Promise<void> {
    await this.active?.close();
  }
}

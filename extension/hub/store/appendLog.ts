// An append-only file of JSON lines. A batch goes out in one write and one fdatasync; the caller
// groups concurrent commits into batches (the floor for durability is one fsync'd append), and may
// write the next batch while the previous one's fdatasync is still running.
//
// The journal is preallocated: the write that outgrows the file carries zeros after its lines, so
// the batches after it overwrite blocks that exist, and their fdatasync flushes data only — no
// size or extent change for the filesystem to commit (docs/performance.md, "Group commit"). The file
// then ends in zeros after its last line, which a reader takes as the end (no newline: not a line).
import { dirname } from 'node:path';
import { frameLine, parseLine } from './logLine';
import { scanLog, type LoadedLine, type ScanOptions } from './logScan';
import { StoreDamage } from './storeDamage';
import { nodeFs, writeAll, type StoreFile, type StoreFs } from './storeFs';

export type { LoadedLine };

export class AppendLog<T> {
  private fh?: StoreFile;
  /** Where the last line ends: the next batch's offset. */
  private size = 0;
  /** Bytes the file holds: past `size` they are zeros, written ahead. */
  private allocated = 0;
  /** The write that grows the file: later writes wait for it, or its zeros could land on their lines. */
  private growing?: Promise<void>;
  /** Bytes known to be fdatasync'd: each batch's lines carry it (logLine.ts `synced`). */
  private durable = 0;
  /** Where each write still in flight starts: a sync covers only the bytes before the first. */
  private readonly inFlight = new Set<number>();

  /**
   * `revive` turns a parsed line into a T (store/revive.ts: name-keyed records become dicts);
   * `preallocate`: how many bytes of zeros the write that outgrows the file adds (0: none).
   */
  constructor(
    readonly path: string,
    private readonly revive: (parsed: T) => T,
    private readonly preallocate = 0,
    private readonly fs: StoreFs = nodeFs,
  ) {}

  get bytes(): number {
    return this.size;
  }

  /**
   * Opens the log and hands each record to `each`, read a chunk at a time. A torn tail (the process
   * died mid-write) is cut off: it was never acknowledged, because acknowledgement waits for the
   * fdatasync. A bad line anywhere else is damage (logScan.ts): StoreDamage is thrown and the file
   * is left as it is. `onTorn`: told what a cut dropped.
   */
  async open(
    each: (line: LoadedLine<T>) => void,
    onTorn?: (at: number, records: number) => void,
    read?: ScanOptions<T>,
  ): Promise<void> {
    // Not O_APPEND: every write goes to the offset its batch was given, so batches may be written concurrently.
    const fh = await this.fs.open(this.path, 'update');
    try {
      const size = await fh.size();
      const scan = await scanLog(this.path, fh, this.revive, each, read);
      if (scan.damage) throw new StoreDamage(scan.damage);
      if (scan.torn) {
        await fh.truncate(scan.good);
        onTorn?.(scan.good, scan.torn.records);
      }
      // What was read is made durable before any line marks it so (logLine.ts `synced`).
      if (scan.good > 0 || scan.torn) await fh.sync();
      this.size = scan.good;
      this.allocated = scan.torn ? scan.good : size;
      this.durable = scan.good;
      if (size === 0) await this.fs.syncDir(dirname(this.path)); // the new file's name must be durable too
    } catch (e) {
      await fh.close();
      throw e;
    }
    this.fh = fh;
  }

  /** Writes the lines with one write and one fdatasync; resolves with where each line is. */
  async writeBatch(values: T[]): Promise<{ offset: number; length: number }[]> {
    const start = this.size;
    try {
      const places = await this.write(values);
      await this.sync();
      return places;
    } catch (e) {
      await this.cutTo(start).catch(() => undefined); // the next batch must start on a clean line
      throw e;
    }
  }

  /**
   * Writes the lines at the end, in one write, not yet durable: `sync` makes them so. The space is
   * taken at the call, so batches written concurrently land in call order; if a write fails, the
   * caller cuts the log back (cutTo) once the writes in flight are done.
   */
  async write(values: T[]): Promise<{ offset: number; length: number }[]> {
    if (!this.fh) throw new Error(`${this.path} is not open`);
    const fh = this.fh;
    // One buffer for the batch, each line written into it: no buffer per line, no joined copy.
    const texts = values.map((v) => frameLine(JSON.stringify(v), this.durable));
    const lengths = texts.map((t) => Buffer.byteLength(t, 'utf8'));
    const lines = Buffer.allocUnsafe(lengths.reduce((n, l) => n + l + 1, 0));
    let end = 0;
    for (let i = 0; i < texts.length; i++) {
      end += lines.write(texts[i], end, 'utf8');
      lines[end++] = 0x0a;
    }
    const start = this.size;
    this.size = start + lines.length;
    this.inFlight.add(start);
    try {
      await this.place(fh, lines, start);
    } finally {
      this.inFlight.delete(start);
    }
    let offset = start;
    return lengths.map((length) => {
      const at = { offset, length };
      offset += length + 1;
      return at;
    });
  }

  private async place(fh: StoreFile, lines: Buffer, start: number): Promise<void> {
    const before = this.growing;
    if (this.size <= this.allocated || this.preallocate === 0) {
      await before;
      await writeAll(fh, lines, start);
    } else {
      this.allocated = this.size + this.preallocate;
      const grow = (async () => {
        await before;
        // A disk without room for the zeros may still have room for the lines.
        await writeAll(fh, Buffer.concat([lines, Buffer.alloc(this.preallocate)]), start).catch(() =>
          writeAll(fh, lines, start),
        );
      })();
      this.growing = grow.catch(() => undefined);
      await grow;
    }
  }

  /** fdatasync: everything written before this call is durable once it resolves. */
  async sync(): Promise<void> {
    if (!this.fh) throw new Error(`${this.path} is not open`);
    const covered = Math.min(this.size, ...this.inFlight);
    await this.fh.datasync();
    this.durable = Math.max(this.durable, Math.min(covered, this.size));
  }

  /**
   * Cuts the file back to `offset` (a line boundary), durably: the lines of a batch whose sync
   * failed may have reached the disk all the same, and must not come back after a power cut as
   * commits that were refused. Throws if the cut could not be made durable.
   */
  async cutTo(offset: number): Promise<void> {
    await this.growing;
    this.size = Math.min(this.size, offset);
    this.allocated = this.size;
    this.durable = Math.min(this.durable, offset);
    if (!this.fh) return;
    await this.fh.truncate(offset);
    await this.fh.sync();
  }

  async readAt(offset: number, length: number): Promise<T> {
    if (!this.fh) throw new Error(`${this.path} is not open`);
    const buf = Buffer.alloc(length);
    await this.fh.read(buf, 0, length, offset);
    const line = parseLine(buf, this.revive);
    if (!line.ok) throw new Error(`${this.path} is damaged at byte ${offset}: ${line.why}`);
    return line.value;
  }

  async truncate(): Promise<void> {
    if (!this.fh) return;
    await this.growing;
    await this.fh.truncate(0);
    await this.fh.sync();
    this.size = 0;
    this.allocated = 0;
    this.durable = 0;
  }

  async close(): Promise<void> {
    await this.fh?.close();
    this.fh = undefined;
  }
}

// lowdb adapter for a whole JSON document: write a temp file, fsync it, rename it over the old
// one, fsync the directory. A crash at any instant leaves either the old or the new document. The
// checkpoint is written the same way a line at a time (checkpointFile.ts); the bus bench's
// whole-document baseline uses this one.
import { parseState } from '../bus/dict';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';
import { nodeFs, writeAll, type StoreFile, type StoreFs } from './storeFs';

/**
 * Replaces `path` as a whole: `fill` writes the temp file and says how many bytes it wrote, then
 * the file is fsync'd, renamed over the old one and its directory fsync'd. Returns the size.
 */
export async function replaceDurably(
  fs: StoreFs,
  path: string,
  fill: (file: StoreFile) => Promise<number>,
): Promise<number> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const file = await fs.open(tmp, 'replace');
  let bytes: number;
  try {
    bytes = await fill(file);
    await file.sync();
  } catch (e) {
    await file.close().catch(() => undefined);
    await fs.unlink(tmp).catch(() => undefined);
    throw e;
  }
  await file.close();
  await fs.rename(tmp, path);
  await fs.syncDir(dirname(path));
  return bytes;
}

export class DurableJsonFile<T> implements Adapter<T> {
  /** Size of the document last read or written; the store paces checkpoints by it. */
  bytesOnDisk = 0;

  constructor(
    readonly path: string,
    private readonly revive: (parsed: T) => T,
    private readonly fs: StoreFs = nodeFs,
  ) {}

  async read(): Promise<T | null> {
    try {
      const text = (await this.fs.readFile(this.path)).toString('utf8');
      this.bytesOnDisk = Buffer.byteLength(text);
      return parseState(text, this.revive);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async write(data: T): Promise<void> {
    this.bytesOnDisk = await replaceDurably(this.fs, this.path, async (file) => {
      const text = Buffer.from(JSON.stringify(data));
      await writeAll(file, text, 0);
      return text.length;
    });
  }
}

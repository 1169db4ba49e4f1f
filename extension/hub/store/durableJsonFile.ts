// lowdb adapter for a whole JSON document: write a temp file, fsync it, rename it over the old
// one, fsync the directory. A crash at any instant leaves either the old or the new document. The
// checkpoint is written the same way a line at a time (checkpointFile.ts); the bus bench's
// whole-document baseline uses this one.
import { parseState } from '../bus/dict';
import { open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';

export async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return; // directories cannot be opened for fsync there
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Replaces `path` as a whole: `fill` writes the temp file and says how many bytes it wrote, then
 * the file is fsync'd, renamed over the old one and its directory fsync'd. Returns the size.
 */
export async function replaceDurably(path: string, fill: (fh: FileHandle) => Promise<number>): Promise<number> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fh = await open(tmp, 'w', 0o600);
  let bytes: number;
  try {
    bytes = await fill(fh);
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  await rename(tmp, path);
  await fsyncDir(dirname(path));
  return bytes;
}

export class DurableJsonFile<T> implements Adapter<T> {
  /** Size of the document last read or written; the store paces checkpoints by it. */
  bytesOnDisk = 0;

  constructor(readonly path: string, private readonly revive: (parsed: any) => T) {}

  async read(): Promise<T | null> {
    try {
      const text = await readFile(this.path, 'utf8');
      this.bytesOnDisk = Buffer.byteLength(text);
      return parseState(text, this.revive);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async write(data: T): Promise<void> {
    this.bytesOnDisk = await replaceDurably(this.path, async (fh) => {
      const text = JSON.stringify(data);
      await fh.writeFile(text);
      return Buffer.byteLength(text);
    });
  }
}

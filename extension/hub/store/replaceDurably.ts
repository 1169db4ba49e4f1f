// A file replaced as a whole, durably: write a temp file, fsync it, rename it over the old one,
// fsync the directory. A crash at any instant leaves either the old or the new file.
import { basename, dirname, join } from 'node:path';
import type { StoreFile, StoreFs } from './storeFs';

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

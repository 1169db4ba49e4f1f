// What retention removed, and a drop under way (history/dropped.json): the intent a crash may
// leave, which a start finishes (finishDrop) before history reads anything. Its own file, so
// history (which finishes a drop) and retention (which makes one) do not import each other.
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { replaceDurably } from './replaceDurably';
import { StoreDamage } from './storeDamage';
import { writeAll, type StoreFs } from './storeFs';

/** The archive an earlier version wrote, named from the history folder. */
export const LEGACY = '../archive.ndjson';

const dropRecord = z
  .object({
    segments: z.number().int().nonnegative(),
    handoffs: z.number().int().nonnegative(),
    /** Every handoff retention removed was settled before this (ms). */
    settledBefore: z.number().nonnegative(),
    /** Files of a drop under way: a start removes those still there before it reads the folder. */
    removing: z.array(z.union([z.string().regex(/^\d{6}\.(idx|ndjson)$/), z.literal(LEGACY)])).max(100_000),
  })
  .strict();
export type DropRecord = z.infer<typeof dropRecord>;

const NONE: DropRecord = { segments: 0, handoffs: 0, settledBefore: 0, removing: [] };

const damaged = (path: string, why: string) =>
  StoreDamage.ofFile(path, why, 'is not as the hub wrote it', 'remove that file or fix it');

export async function readJson(fs: StoreFs, path: string): Promise<unknown> {
  let text: string;
  try {
    text = (await fs.readFile(path)).toString('utf8');
  } catch {
    return undefined; // none
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    return { unparsable: (e as Error).message };
  }
}

export async function writeJson(fs: StoreFs, path: string, value: unknown): Promise<void> {
  const buf = Buffer.from(`${JSON.stringify(value)}\n`);
  await replaceDurably(fs, path, async (file) => {
    await writeAll(file, buf, 0);
    return buf.length;
  });
}

/** What retention removed so far (history/dropped.json), or none. */
export async function readDropRecord(fs: StoreFs, historyDir: string): Promise<DropRecord> {
  const path = join(historyDir, 'dropped.json');
  const raw = await readJson(fs, path);
  if (raw === undefined) return NONE;
  const r = dropRecord.safeParse(raw);
  if (!r.success) throw damaged(path, r.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; '));
  return r.data;
}

/** A drop a crash cut short is finished: its files removed (durably), then its intent cleared. */
export async function finishDrop(fs: StoreFs, historyDir: string, legacyPath: string): Promise<void> {
  const record = await readDropRecord(fs, historyDir);
  if (record.removing.length === 0) return;
  await removeFiles(fs, historyDir, legacyPath, record.removing);
  await writeJson(fs, join(historyDir, 'dropped.json'), { ...record, removing: [] });
}

/**
 * The unlinks in history/ are made durable by the fsync of that folder that clears the intent
 * next (replaceDurably): not before it. The archive's is in the store folder, which that does not
 * fsync: without this one a cut could bring it back with no index left to cover it.
 */
export async function removeFiles(fs: StoreFs, historyDir: string, legacyPath: string, names: string[]): Promise<void> {
  for (const n of names)
    await fs.unlink(n === LEGACY ? legacyPath : join(historyDir, n)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
  if (names.includes(LEGACY)) await fs.syncDir(dirname(legacyPath));
}

// Stores kept per folder before the bus belonged to the repository (a window on a worktree or a
// subfolder had a store of its own, keyed by that folder). The repository's hub takes such a store
// over once, by renaming it into place, and says so; it never merges two histories by itself.
// Never under a live hub: a window not yet reloaded after an update still runs the old per-folder
// hub on that store, and a rename under it left two hubs writing one journal (damaged, and every
// acknowledged send unreadable after kill -9). The old store's own lock says whether one does.
import { dirname, join } from 'node:path';
import type { Log } from '../../protocol/hubLog';
import { canonical, defaultStoreDir } from '../../shared/paths';
import { findCheckout, linkedWorktrees } from '../../shared/repository';
import { takeProcessLock, type ProcessLock } from '../../shared/processLock';
import { nodeFs, type StoreFs } from '../store/storeFs';

export interface AdoptOptions {
  /** Between two asks of the old store's lock while a hub has it open. */
  everyMs?: number;
  /** What the move is written through: the store's own seam, so the power-cut tests cut it too. */
  fs?: StoreFs;
  lock?: (guarded: string) => Promise<ProcessLock>;
}

/** Whether a store folder has ever held anything (a missing one, or one of empty files, has not). */
async function holdsAnything(fs: StoreFs, dir: string): Promise<boolean> {
  let names: string[];
  try {
    names = await fs.list(dir);
  } catch {
    return false;
  }
  for (const name of names) {
    const st = await fs.lstat(join(dir, name));
    if (st.isDirectory || st.size > 0) return true;
  }
  return false;
}

async function exists(fs: StoreFs, path: string): Promise<boolean> {
  try {
    await fs.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** The folders whose old per-folder store may belong to `workspace`'s repository now. */
export function folderStoreCandidates(workspace: string, openedFrom: string): string[] {
  const checkout = findCheckout(canonical(openedFrom));
  const folders = new Set([canonical(openedFrom)]);
  if (checkout) for (const w of linkedWorktrees(checkout.commonDir)) folders.add(canonical(w));
  folders.delete(workspace);
  return [...folders];
}

/** The old store's lock, once no process holds it; says once that it waits, for whom and why. */
async function whenFree(
  old: string,
  folder: string,
  log: Log,
  { everyMs = 250, lock: take = takeProcessLock }: AdoptOptions,
): Promise<ProcessLock & { owned: true }> {
  let said = false;
  for (;;) {
    const lock = await take(old);
    if (lock.owned) {
      if (said) log(`the hub that had ${old} open has stopped: adopting its store now`, 'warn');
      return lock;
    }
    if (!said) {
      said = true;
      log(
        `waiting to adopt ${folder}'s own store (${old}): a running hub (pid ${lock.holder?.pid ?? '?'}) has it open — most likely a window not reloaded since Handoff was updated. Its handoffs are moved here once it stops (reload or close that window); until then this hub does not open its store.`,
        'warn',
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Moves the first old store found into `storeDir` when the repository's store has never held
 * anything, once no process has it open; logs every other one it leaves alone (with where it is),
 * so nothing goes unsaid. The caller holds `storeDir`'s lock.
 */
export async function adoptFolderStores(
  workspace: string,
  storeDir: string,
  folders: string[],
  log: Log,
  options: AdoptOptions = {},
): Promise<void> {
  const fs = options.fs ?? nodeFs;
  for (const folder of folders) {
    const old = defaultStoreDir(folder);
    if (old === storeDir || !(await exists(fs, old)) || !(await holdsAnything(fs, old))) continue;
    if (!(await holdsAnything(fs, storeDir))) {
      const lock = await whenFree(old, folder, log, options);
      try {
        await moveStore(fs, old, storeDir);
      } finally {
        lock.release();
      }
      log(
        `store migrated: ${folder} had a store of its own (${old}); it is now the store of the repository ${workspace} (${storeDir}), which every worktree and subfolder shares`,
        'warn',
      );
      continue;
    }
    log(
      `store NOT migrated: ${folder} has a store of its own (${old}) and the repository ${workspace} already has one (${storeDir}); the two are not merged — the handoffs in ${old} are kept there, untouched, and are not on this bus`,
      'warn',
    );
  }
}

/**
 * Same parent folder (the state dir): one rename, atomic, and nothing copied, so a cut leaves the
 * store under one name or the other, never two live copies. What is in the way holds nothing (empty
 * files at most) and goes first; the rename is made durable before the store opens.
 */
async function moveStore(fs: StoreFs, old: string, storeDir: string): Promise<void> {
  if (await exists(fs, storeDir)) {
    for (const name of await fs.list(storeDir)) await fs.unlink(join(storeDir, name));
    await fs.rmdir(storeDir);
  }
  await fs.rename(old, storeDir);
  await fs.syncDir(dirname(storeDir));
}

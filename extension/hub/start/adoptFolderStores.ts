// Stores kept per folder before the bus belonged to the repository (a window on a worktree or a
// subfolder had a store of its own, keyed by that folder). The repository's hub takes such a store
// over once, by renaming it into place, and says so; it never merges two histories by itself.
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Log } from '../../protocol/hubLog';
import { canonical, defaultStoreDir } from '../../shared/paths';
import { findCheckout, linkedWorktrees } from '../../shared/repository';

/** Whether a store folder has ever held anything (a missing or empty one has not). */
function holdsAnything(dir: string): boolean {
  try {
    return readdirSync(dir).some((name) => statSync(`${dir}/${name}`).size > 0);
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

/**
 * Moves the first old store found into `storeDir` when the repository's store has never held
 * anything; logs every other one it leaves alone (with where it is), so nothing goes unsaid.
 */
export function adoptFolderStores(workspace: string, storeDir: string, folders: string[], log: Log): void {
  for (const folder of folders) {
    const old = defaultStoreDir(folder);
    if (old === storeDir || !existsSync(old) || !holdsAnything(old)) continue;
    if (!holdsAnything(storeDir)) {
      // Same parent folder (the state dir): one rename, atomic, and nothing copied. What is in the
      // way holds nothing (empty files at most), and the rename is made durable before the store opens.
      rmSync(storeDir, { recursive: true, force: true });
      renameSync(old, storeDir);
      const parent = openSync(dirname(storeDir), 'r');
      try {
        fsyncSync(parent);
      } finally {
        closeSync(parent);
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

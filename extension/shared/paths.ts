// Where a workspace's hub lives. Both the hub and every client derive the same path from the
// workspace folder, so an agent started outside the editor's terminal still finds the hub. In git,
// the workspace is the repository (its main checkout), whichever checkout or subfolder one is in.
import { chmodSync, existsSync, lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { findCheckout } from './repository';
import { hubIpcPath } from './platform/ipcPath';
import { thisKeyPath } from './platform/workspacePath';

/** Folders and files that mark a workspace root outside git, walking up from a cwd. */
const WORKSPACE_MARKERS = ['.git', '.vscode', '.handoff', 'package.json'];

/** The folder's real path (symlinks resolved), or its absolute path when it does not exist. */
export function canonical(dir: string): string {
  const abs = resolve(dir);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

export function workspaceKey(workspace: string): string {
  // Loaded on first use: node:crypto is a third of a hook's start, and a hook told its hub needs no key.
  const { createHash } = process.getBuiltinModule('node:crypto');
  return createHash('sha256')
    .update(thisKeyPath(canonical(workspace)))
    .digest('hex')
    .slice(0, 16);
}

/**
 * Makes `dir` a real folder of ours that only we may enter, or throws. `refuseWritable`: a folder
 * that others could write is refused rather than made private, since what they wrote is in it
 * already (the launcher folder, first on every terminal's PATH).
 */
export function ensurePrivateDir(dir: string, opts: { refuseWritable?: boolean } = {}): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode is masked by umask and ignored for an existing dir: enforce it, and refuse a dir
  // someone else owns (another user could otherwise read the sockets in it).
  // lstat: a symlink planted in the shared temp dir must not send our sockets (and chmod) elsewhere.
  const st = lstatSync(dir);
  if (st.isSymbolicLink() || !st.isDirectory())
    throw new Error(
      `${dir} is a symlink or not a directory; remove it (Handoff keeps its sockets only in a real directory of its own)`,
    );
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new Error(`${dir} belongs to uid ${st.uid}, not to you; remove it or set XDG_RUNTIME_DIR`);
  }
  if (opts.refuseWritable && typeof process.getuid === 'function' && st.mode & 0o022)
    throw new Error(
      `${dir} may be written by others (mode ${(st.mode & 0o777).toString(8)}): what they put there would run first on every terminal's PATH. Check what is in it, then remove it; Handoff makes it anew, private`,
    );
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

export function hubSocketPath(workspace: string): string {
  return hubIpcPath(workspaceKey(workspace));
}

/**
 * Where V8 keeps the compiled hub between starts (NODE_COMPILE_CACHE): a private folder of ours,
 * since whoever may write a code cache picks what runs. Undefined when it cannot be made so.
 */
export function compileCacheDir(): string | undefined {
  const dir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'handoff', 'v8');
  try {
    ensurePrivateDir(dirname(dir));
    ensurePrivateDir(dir);
    return dir;
  } catch {
    return undefined;
  }
}

/** Default store location for a workspace when the editor does not give one. */
export function defaultStoreDir(workspace: string): string {
  const state = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(state, 'handoff', workspaceKey(workspace));
}

/**
 * The workspace a process in `cwd` belongs to: the repository when `cwd` is in git (every worktree
 * and subfolder shares its main checkout's hub), else the nearest ancestor with a marker.
 */
export function findWorkspace(cwd: string): string {
  const start = canonical(cwd);
  const checkout = findCheckout(start);
  if (checkout) return canonical(checkout.root);
  for (let dir = start; ;) {
    if (WORKSPACE_MARKERS.some((m) => existsSync(join(dir, m)))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return start;
    dir = parent;
  }
}

/** The workspace of a folder named explicitly (`--workspace`): its repository in git, else itself. */
export function workspaceOf(folder: string): string {
  const dir = canonical(folder);
  const checkout = findCheckout(dir);
  return checkout ? canonical(checkout.root) : dir;
}

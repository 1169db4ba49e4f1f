// How a bridge, hook or CLI finds its workspace's hub whatever environment its agent CLI gives it.
// The socket lives in the runtime dir, which depends on XDG_RUNTIME_DIR and TMPDIR — variables CLIs
// strip or change — so the hub also leaves a pointer to it under HOME, the one variable every CLI
// passes. The pointer is private (0600 in a 0700 dir of ours); one that is not is ignored.
import {
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  constants,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensurePrivateDir, findWorkspace, hubSocketPath, workspaceKey, workspaceOf } from './paths';
import { powers } from './platform/powers';

const MAX_POINTER_BYTES = 4096;

interface Pointer {
  socket: string;
  pid: number;
  workspace: string;
}

function pointerDir(): string {
  return join(homedir(), '.local', 'state', 'handoff', 'hubs');
}

export function hubPointerPath(workspace: string): string {
  return join(pointerDir(), `${workspaceKey(workspace)}.json`);
}

/** Written by the hub once it listens: atomically, so a reader never sees half a pointer. */
export function writeHubPointer(workspace: string, socket: string): void {
  ensurePrivateDir(pointerDir());
  const path = hubPointerPath(workspace);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ socket, pid: process.pid, workspace } satisfies Pointer), { mode: 0o600 });
  renameSync(tmp, path);
}

/** Removed by the hub as it stops, unless a newer hub has written its own since. */
export function removeHubPointer(workspace: string): void {
  const path = hubPointerPath(workspace);
  if (readPointer(path)?.pid === process.pid) rmSync(path, { force: true });
}

/** Ours alone: owned by this user, and nobody else may read or write it. */
function privateToMe(st: { uid: number; mode: number }): boolean {
  return (typeof process.getuid !== 'function' || st.uid === process.getuid()) && (st.mode & 0o077) === 0;
}

/**
 * A file that is ours alone, read whole: a regular file (O_NOFOLLOW: a symlink planted in its
 * place is not followed; O_NONBLOCK: nor can a FIFO hold us), owned by us, nobody else may read or
 * write it, at most `maxBytes`. Undefined for anything else, or none.
 */
export function readPrivateFile(path: string, maxBytes: number): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile() || !privateToMe(st) || st.size > maxBytes) return undefined;
    const buf = Buffer.alloc(st.size);
    return buf.subarray(0, readSync(fd, buf, 0, st.size, 0));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function readPointer(path: string): Pointer | undefined {
  const bytes = readPrivateFile(path, MAX_POINTER_BYTES);
  if (!bytes) return undefined;
  try {
    const dir = lstatSync(pointerDir());
    if (!dir.isDirectory() || !privateToMe(dir)) return undefined;
    const p = JSON.parse(bytes.toString('utf8')) as Partial<Pointer>;
    if (
      typeof p.socket !== 'string' ||
      p.socket.length > 1024 ||
      typeof p.pid !== 'number' ||
      typeof p.workspace !== 'string'
    )
      return undefined;
    return p as Pointer;
  } catch {
    return undefined; // unreadable or not JSON: as if there were none
  }
}

export interface HubCandidates {
  /** Where to try, in order: HANDOFF_HUB, the pointer's socket, the socket derived here. */
  sockets: string[];
  workspace: string;
}

/**
 * HANDOFF_HUB (an integrated terminal's, or --hub) first; then the pointer the workspace's hub
 * left under HOME; then the socket derived from the folder in this process's environment. Read
 * anew on every try: a hub that starts later, or elsewhere, is found by the next one.
 */
export function hubCandidates(env: NodeJS.ProcessEnv, cwd: string, pinned?: string): HubCandidates {
  const workspace = pinned ? workspaceOf(pinned) : findWorkspace(cwd);
  return { sockets: [...hubSockets(env, workspace)], workspace };
}

/**
 * The same places one at a time, each worked out only when the one before did not answer: a hook
 * whose HANDOFF_HUB answers reads no pointer and hashes no path.
 */
export function* hubSockets(env: NodeJS.ProcessEnv, workspace: string | (() => string)): Generator<string> {
  const seen = new Set<string>();
  // Worked out when first needed: finding the workspace walks up the folders.
  let known: string | undefined;
  const folder = () => (known ??= typeof workspace === 'string' ? workspace : workspace());
  const found = [
    () => env.HANDOFF_HUB,
    // Found ones must sit in a directory that is ours alone (one named explicitly is the namer's choice).
    () => readPointer(hubPointerPath(folder()))?.socket,
    () => hubSocketPath(folder()),
  ];
  for (const [i, where] of found.entries()) {
    const socket = where();
    if (!socket || seen.has(socket) || (i > 0 && !inPrivateDir(socket))) continue;
    seen.add(socket);
    yield socket;
  }
}

/** A socket whose directory another user owns or may write could be an impostor's. */
export function inPrivateDir(socket: string): boolean {
  if (!powers.socketFiles) return true; // a named pipe: no folder, no modes
  try {
    const dir = lstatSync(dirname(socket));
    return dir.isDirectory() && privateToMe(dir);
  } catch {
    return false;
  }
}

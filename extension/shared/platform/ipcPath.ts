// Where a repository's hub listens: a unix socket in a user-private folder, or on Windows a named
// pipe. Pure functions of the platform and the user's folders, so each platform's answer is tested
// here on Linux (test/unit/platform.test.ts).
import { existsSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, win32 } from 'node:path';

/** The folder sockets live in, before `handoff-<uid>`: the runtime dir when it exists, else Linux's standard /run/user/<uid>, else the temp dir. */
export function runtimeBase(p: {
  platform: NodeJS.Platform;
  xdgRuntimeDir?: string;
  uid: number | string;
  tmpdir: string;
  exists: (path: string) => boolean;
}): string {
  if (p.xdgRuntimeDir && p.exists(p.xdgRuntimeDir)) return p.xdgRuntimeDir;
  const standard = `/run/user/${p.uid}`;
  return p.platform === 'linux' && p.exists(standard) ? standard : p.tmpdir;
}

/** The longest unix socket path bind accepts: sun_path less its terminating NUL (104 bytes on Apple, 108 on Linux). */
export function maxSocketPath(platform: NodeJS.Platform): number {
  return platform === 'darwin' || platform === 'freebsd' || platform === 'openbsd' ? 103 : 107;
}

/**
 * The hub's socket or pipe for repository `key`. A runtime folder too long to hold a socket (a
 * macOS $TMPDIR under /var/folders) falls back to /tmp/handoff-<uid>; clients find it through the
 * pointer anyway.
 */
export function ipcPath(p: {
  platform: NodeJS.Platform;
  key: string;
  /** The private folder sockets go in (`<runtimeBase>/handoff-<uid>`). */
  runtimeDir: string;
  /** The user's name (a pipe has no folder to be private in: the name carries the user). */
  user: string;
  uid: number | string;
}): string {
  if (p.platform === 'win32') return `\\\\.\\pipe\\handoff-${p.user}-${p.key}`;
  const path = join(p.runtimeDir, `hub-${p.key}.sock`);
  if (Buffer.byteLength(path) <= maxSocketPath(p.platform)) return path;
  return join('/tmp', `handoff-${p.uid}`, `hub-${p.key}.sock`);
}

/** This user's id where there are uids, else their name: what their private folders are named by. */
function me(): number | string {
  return typeof process.getuid === 'function' ? process.getuid() : userInfo().username;
}

/**
 * This user's private folder for sockets (0700, made by paths.ts). Without XDG_RUNTIME_DIR (agent
 * CLIs strip it from their servers' and hooks' env) the standard /run/user/<uid> is used when it
 * exists, so the hub and its agents agree on the path either way.
 */
export function socketFolder(): string {
  const uid = me();
  const base = runtimeBase({
    platform: process.platform,
    xdgRuntimeDir: process.env.XDG_RUNTIME_DIR,
    uid,
    tmpdir: tmpdir(),
    exists: existsSync,
  });
  return join(base, `handoff-${uid}`);
}

/** This machine's socket or pipe for repository `key`. */
export function hubIpcPath(key: string): string {
  const platform = process.platform;
  return ipcPath({
    platform,
    key,
    runtimeDir: platform === 'win32' ? '' : socketFolder(),
    user: userInfo().username,
    uid: me(),
  });
}

/**
 * Where the hub of `ipc` keeps its secret (shared/hubSecret.ts): beside a unix socket, in its
 * private folder; for a named pipe, which has no folder, in the user's state folder under the
 * profile (private to the user by the profile's ACL), named after the pipe.
 */
export function hubSecretPath(ipc: string, stateHome: string): string {
  const pipe = /^\\\\[.?]\\pipe\\(.+)$/i.exec(ipc);
  return pipe
    ? win32.join(stateHome, 'handoff', 'pipes', `${pipe[1].replace(/[\\/:*?"<>|]/g, '_')}.secret`)
    : `${ipc}.secret`;
}

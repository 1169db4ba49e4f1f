// Quiet marks: next to its socket a hub keeps a file per local identity that has no handoff
// waiting (`<socket>.quiet/<identity>`, holding the hub's pid). A hook on a tool call — the hook
// that runs most — finds it and exits without asking the hub: loading node:net and the round trip
// were most of a hook's cost (docs/performance.md › The hook's start). The hub removes an
// identity's mark before it acknowledges the commit that gives it a handoff, and a hook that finds
// no mark, or the mark of a hub that is gone, asks as before.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { IDENTITY_PATTERN } from '../protocol/names';

export function quietDir(socket: string): string {
  return `${socket}.quiet`;
}

export function quietMarkPath(socket: string, identity: string): string {
  return join(quietDir(socket), identity);
}

/**
 * Whether the hub on `socket` says nothing waits for the identity, and that hub still runs. Only a
 * regular file of ours that nobody else may write counts (the folder may be one a user named).
 */
export function isQuiet(socket: string, identity: string): boolean {
  if (!IDENTITY_PATTERN.test(identity) || identity.includes('@')) return false;
  let fd: number | undefined;
  try {
    fd = openSync(quietMarkPath(socket, identity), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
    if (!st.isFile() || !mine || st.mode & 0o022 || st.size > 16) return false;
    const buf = Buffer.alloc(16);
    const pid = Number(buf.toString('latin1', 0, readSync(fd, buf, 0, 16, 0)));
    if (!Number.isInteger(pid) || pid <= 1) return false;
    process.kill(pid, 0); // throws once the hub is gone (kill -9 leaves its marks behind)
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

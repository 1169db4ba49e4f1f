// Quiet marks: next to its socket a hub keeps a file per local identity that has no handoff
// waiting (`<socket>.quiet/<identity>`, holding the hub's pid). A hook on a tool call — the hook
// that runs most — finds it and exits without asking the hub: loading node:net and the round trip
// were most of a hook's cost (docs/performance.md › The hook's start). The hub removes an
// identity's mark before it acknowledges the commit that gives it a handoff, and a hook that finds
// no mark, or the mark of a hub that is gone, asks as before.
import { join } from 'node:path';
import { IDENTITY_PATTERN } from '../protocol/names';
import { readPrivateFile } from './discovery';

/** The most a mark holds: a pid. */
const MAX_MARK_BYTES = 16;

export function quietDir(socket: string): string {
  return `${socket}.quiet`;
}

/** Who can have a mark: a valid local identity name (a remote one's handoffs wait on its own node). */
export function markable(identity: string): boolean {
  return IDENTITY_PATTERN.test(identity) && !identity.includes('@');
}

export function quietMarkPath(socket: string, identity: string): string {
  return join(quietDir(socket), identity);
}

/**
 * Whether the hub on `socket` says nothing waits for the identity, and that hub still runs. Only a
 * file of ours alone counts (the folder may be one a user named).
 */
export function isQuiet(socket: string, identity: string): boolean {
  if (!markable(identity)) return false;
  const bytes = readPrivateFile(quietMarkPath(socket, identity), MAX_MARK_BYTES);
  const pid = bytes ? Number(bytes.toString('latin1')) : NaN;
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    process.kill(pid, 0); // throws once the hub is gone (kill -9 leaves its marks behind)
    return true;
  } catch {
    return false;
  }
}

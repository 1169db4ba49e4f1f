// Where a lock that dies with its process lives, per platform (shared/processLock.ts). Node has no
// flock(2), but each platform has something the kernel takes back from a process that dies:
// - Linux: a unix socket bound in the abstract namespace (a name, no file). Bound by one process at
//   a time; the kernel unbinds it when the process exits or is killed. Its scope is the network
//   namespace: two processes in two network namespaces on one disk do not see each other's.
// - Windows: a named pipe, made with FILE_FLAG_FIRST_PIPE_INSTANCE by libuv, so a second server
//   of one name fails; the pipe goes with the last handle, which is its process's.
// - macOS and the BSDs: no abstract namespace; open(2)'s O_EXLOCK takes flock(2) on the lock file as
//   it opens it (O_NONBLOCK: refused at once when held), and the kernel drops it with the descriptor.
import { platform as thisPlatform, userInfo } from 'node:os';

export type LockAddress = { kind: 'socket'; name: string } | { kind: 'exlock'; path: string; flags: number };

/** Apple's and the BSDs' open(2) flags (<sys/fcntl.h>), which Node's fs.constants does not export. */
const BSD_O_EXLOCK = 0x20;
const BSD_O_NONBLOCK = 0x4;

/** The lock named by `key` (a hash of what it guards): `file` is the lock file where one is needed. */
export function lockAddress(p: {
  platform: NodeJS.Platform;
  key: string;
  file: string;
  user: string;
  uid: number | string;
  /** fs.constants: O_RDWR | O_CREAT. */
  openFlags: number;
}): LockAddress {
  if (p.platform === 'linux' || p.platform === 'android')
    return { kind: 'socket', name: `\0handoff-lock-${p.uid}-${p.key}` };
  if (p.platform === 'win32') return { kind: 'socket', name: `\\\\.\\pipe\\handoff-lock-${p.user}-${p.key}` };
  return { kind: 'exlock', path: p.file, flags: p.openFlags | BSD_O_EXLOCK | BSD_O_NONBLOCK };
}

export function thisLockAddress(key: string, file: string, openFlags: number): LockAddress {
  return lockAddress({
    platform: thisPlatform(),
    key,
    file,
    user: userInfo().username,
    uid: typeof process.getuid === 'function' ? process.getuid() : userInfo().username,
    openFlags,
  });
}

// A lock the kernel holds for a live process and takes back when it dies (kill -9, a crash, a power
// cut), so it has no stale state to judge: taking it is one atomic bind, and nobody ever deletes
// another process's lock. What it is on each platform: platform/lockName.ts. It replaced a lock file
// whose presence meant "owned", which raced three ways (docs/guarantees.md › "One writer").
//
// Beside it the owner keeps a hint, `<guarded>.lock` naming its pid and start time: for messages
// ("pid 123 holds it"), and for what cannot see our lock — a Handoff from before it (which took that
// file with O_EXCL and honours it) and a process in another network namespace on Linux. A hint that
// names a live process other than us keeps the lock from being taken; one that names a dead one is
// nothing. Only the lock's owner writes it (whole, by rename), so it is never read half-written.
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { thisLockAddress } from './platform/lockName';
import { markProcess, stillRuns } from './proc';

export interface LockHolder {
  pid: number;
  /** Start time of that pid (Linux: clock ticks since boot), so a reused pid is not mistaken for it. */
  started?: string;
}

export type ProcessLock = { owned: true; release(): void } | { owned: false; holder?: LockHolder };

/** `path` as the kernel knows it: the real folder (which must exist) and the name in it. */
function realPath(path: string): string {
  const abs = resolve(path);
  try {
    return join(realpathSync(dirname(abs)), basename(abs));
  } catch {
    return abs;
  }
}

export const hintPath = (guarded: string) => `${guarded}.lock`;

/** Who the hint names, if anyone (missing or unreadable: nobody). */
export function readHint(guarded: string): LockHolder | undefined {
  try {
    const o = JSON.parse(readFileSync(hintPath(guarded), 'utf8')) as LockHolder;
    return typeof o.pid === 'number' ? o : undefined;
  } catch {
    return undefined;
  }
}

/** Binds the lock's socket or pipe; undefined when another process (or this one) has it bound. */
function bind(name: string): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    // Nothing is served: whoever connects is let go at once.
    const server = createServer((c) => c.destroy());
    server.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' ? resolve(undefined) : reject(e)));
    server.listen(name, () => {
      server.unref(); // the lock never keeps a process alive
      resolve(server);
    });
  });
}

/** Takes the kernel's lock for `guarded`: a close function, or undefined when it is held. */
async function takeKernelLock(guarded: string): Promise<(() => void) | undefined> {
  const real = realPath(guarded);
  const key = createHash('sha256').update(real).digest('hex').slice(0, 40);
  const address = thisLockAddress(key, `${real}.flock`, constants.O_RDWR | constants.O_CREAT);
  if (address.kind === 'socket') {
    const server = await bind(address.name);
    return server && (() => server.close());
  }
  try {
    const fd = openSync(address.path, address.flags, 0o600);
    return () => closeSync(fd);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return undefined;
    throw e;
  }
}

/**
 * Takes the lock on `guarded` (a store folder, a file) for this process, or says it is held and by
 * whom when the hint names them. Throws only when the lock cannot be asked at all.
 */
export async function takeProcessLock(guarded: string): Promise<ProcessLock> {
  const close = await takeKernelLock(guarded);
  const hinted = readHint(guarded);
  // Only a hint with a start time is believed: without one (no /proc) a reused pid would keep a
  // dead owner's hint alive.
  const other =
    hinted?.started !== undefined &&
    hinted.pid !== process.pid &&
    stillRuns({ pid: hinted.pid, start: hinted.started });
  if (!close || other) {
    close?.();
    return { owned: false, holder: other ? hinted : undefined };
  }
  const me: LockHolder = { pid: process.pid, started: markProcess(process.pid).start };
  let hint = false;
  try {
    const tmp = `${hintPath(guarded)}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(me), { mode: 0o600 });
    renameSync(tmp, hintPath(guarded));
    hint = true;
  } catch {
    // A folder that cannot be written (read-only, full): the lock holds without its hint.
  }
  let held = true;
  return {
    owned: true,
    release: () => {
      if (!held) return;
      held = false;
      // The hint first: once the lock is free another owner may write its own.
      if (hint && readHint(guarded)?.pid === process.pid) {
        try {
          unlinkSync(hintPath(guarded));
        } catch {
          // gone already
        }
      }
      close();
    },
  };
}

/** Waits for the lock on `guarded`, asking again every `everyMs`, for at most `timeoutMs`. */
export async function waitForProcessLock(guarded: string, timeoutMs: number, everyMs = 20): Promise<ProcessLock> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const lock = await takeProcessLock(guarded);
    if (lock.owned || Date.now() >= until) return lock;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// Which hub owns a workspace's socket, decided by something a stalled hub still holds: a lock file
// naming its pid and that process's start time, taken before the socket and released at exit. A
// connect probe cannot decide it — a hub stopped for a few seconds (SIGSTOP, swapped out, a full
// accept queue) answers nothing and looks dead, and a second hub that took its socket over lost
// every acknowledged send the first one still had to write.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { markProcess, stillRuns } from '../../shared/proc';

interface Owner {
  pid: number;
  /** Start time of that pid (Linux: clock ticks since boot), so a reused pid is not mistaken for it. */
  started?: string;
}

const alive = (o: Owner) => stillRuns({ pid: o.pid, start: o.started });

function read(path: string): Owner | undefined {
  try {
    const o = JSON.parse(readFileSync(path, 'utf8')) as Owner;
    return typeof o.pid === 'number' ? o : undefined;
  } catch {
    return undefined; // missing, or torn by a crash mid-write: nobody holds it
  }
}

export type Ownership = { owned: true; release(): void } | { owned: false; holder: Owner };

/** Takes the lock for this process, or says which live process holds it. */
export function takeOwnership(lockPath: string): Ownership {
  const me: Owner = { pid: process.pid, started: markProcess(process.pid).start };
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(lockPath, 'wx', 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = read(lockPath);
      if (holder && holder.pid !== process.pid && alive(holder)) return { owned: false, holder };
      unlinkSync(lockPath); // its hub is gone (kill -9, a crash): the lock is stale
      continue;
    }
    writeSync(fd, JSON.stringify(me));
    closeSync(fd);
    return {
      owned: true,
      release: () => {
        if (read(lockPath)?.pid === process.pid) unlinkSync(lockPath);
      },
    };
  }
  throw new Error(`could not take ${lockPath}: another hub keeps replacing it`);
}

// Which process a hook is, as the kernel knows it (#23). A hook's hello states its ancestry, and a
// process can state anything; Node cannot read a unix socket peer's credentials. So the hub names a
// fresh file only it and its user can reach, the hook opens it and answers with its pid, and the
// hub finds that very file among /proc/<pid>/fd: no process can make another one open a file, so
// the pid is the hook's, and the hub reads the ancestry from /proc itself. Linux only (needs /proc).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { MAX_PROOF_BYTES, type HookChallenge } from '../../protocol/hook';
import { hookProof } from '../../protocol/helloSchema';
import { BusError } from '../bus/errors';
import { LineBuffer } from '../../shared/lines';
import { ensurePrivateDir } from '../../shared/paths';

/** A hook answers within its own 120 ms budget; this is only the bound on one that never does. */
const PROOF_WAIT_MS = 2000;
/** A hook process holds a few dozen fds; a pid holding more is not a hook, and is not read through. */
const MAX_FDS = 1024;
/** Levels of ancestry read, the hook itself first. */
const MAX_DEPTH = 16;

export const canProve = process.platform === 'linux' && existsSync('/proc/self/fd');

function refused(why: string): BusError {
  return new BusError(
    'not_your_channel',
    `not_your_channel: could not prove which process this hook is (${why}). Nothing was surfaced.`,
  );
}

/** The next line from the socket, bounded in size and time; the socket is paused between reads. */
function nextLine(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    const input = new LineBuffer(MAX_PROOF_BYTES);
    const done = (e?: Error, line?: string) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (e) reject(e);
      else resolve(line ?? '');
    };
    const timer = setTimeout(
      () => done(refused(`no answer to the challenge within ${PROOF_WAIT_MS} ms`)),
      PROOF_WAIT_MS,
    );
    const onClose = () => done(refused('the hook closed the connection'));
    const onData = (d: Buffer) => {
      const [line] = input.lines(d);
      if (input.overLimit) done(refused(`an answer over ${MAX_PROOF_BYTES} bytes`));
      else if (line !== undefined) done(undefined, line);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.resume();
  });
}

/** Whether `pid` holds `path` open right now. */
function holds(pid: number, path: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  if (fds.length > MAX_FDS) return false;
  return fds.some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
    } catch {
      return false;
    }
  });
}

/** `pid` and its parents, nearest first, from /proc/<pid>/status. */
function lineage(pid: number): number[] {
  const out: number[] = [];
  for (let p = pid; p > 1 && out.length < MAX_DEPTH;) {
    out.push(p);
    let status: string;
    try {
      status = readFileSync(`/proc/${p}/status`, 'utf8');
    } catch {
      break;
    }
    p = Number(/^PPid:\s*(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return out;
}

/**
 * Challenges the hook on its own connection and resolves with its ancestry as the kernel has it
 * (the hook's pid first); rejects with `not_your_channel` when it cannot show it is that process.
 * `dir` is the hub's private directory (0700), already resolved (readlink shows real paths).
 */
export async function proveHook(socket: Socket, dir: string): Promise<number[]> {
  const path = join(dir, randomBytes(16).toString('hex'));
  // O_EXCL|O_NOFOLLOW: a fresh file of our own, never one planted under that name.
  const create = () =>
    closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600));
  try {
    create();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    ensurePrivateDir(dir); // a temp cleaner took the directory of an idle hub: every hook would fail
    create();
  }
  try {
    const challenge: HookChallenge = { challenge: path };
    socket.write(`${JSON.stringify(challenge)}\n`);
    const line = await nextLine(socket);
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw refused('the answer is not JSON');
    }
    const proof = hookProof.safeParse(value);
    if (!proof.success) throw refused('the answer is not {"pid": N}');
    if (!holds(proof.data.pid, path)) throw refused(`process ${proof.data.pid} does not hold the challenge file open`);
    return lineage(proof.data.pid);
  } finally {
    try {
      unlinkSync(path);
    } catch {
      // already gone: nothing to clean
    }
  }
}

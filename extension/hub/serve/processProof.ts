// Which process a hook or a bridge is, as the kernel knows it (#23). A hello states its ancestry,
// and a process can state anything; Node cannot read a unix socket peer's credentials. So the hub
// names a fresh file only it and its user can reach, the peer opens it and answers with its pid,
// and the hub finds that very file among /proc/<pid>/fd: no process can make another one open a
// file, so the pid is the peer's, and the hub reads the ancestry from /proc itself. Linux only.
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
import { processProof } from '../../protocol/helloSchema';
import { BusError } from '../bus/errors';
import { LineBuffer } from '../../shared/lines';
import { ensurePrivateDir } from '../../shared/paths';

/** A hook answers within its own 120 ms budget; this is only the bound on a peer that never does. */
const PROOF_WAIT_MS = 2000;
/** A hook or bridge holds a few dozen fds; a pid holding more is not one, and is not read through. */
const MAX_FDS = 1024;
/** Levels of ancestry read, the hook itself first. */
const MAX_DEPTH = 16;

export const canProve = process.platform === 'linux' && existsSync('/proc/self/fd');

export type Peer = 'hook' | 'bridge';

function refused(peer: Peer, why: string): BusError {
  return new BusError(
    'not_your_channel',
    `not_your_channel: could not prove which process this ${peer} is (${why}). ${peer === 'hook' ? 'Nothing was surfaced.' : 'Nothing it asks is recorded.'}`,
  );
}

/**
 * The next line from the socket and the bytes after it, bounded in size and time; the socket is
 * paused once it is read.
 */
function nextLine(socket: Socket, peer: Peer): Promise<{ line: string; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const input = new LineBuffer(MAX_PROOF_BYTES);
    const done = (e?: Error, read?: { line: string; rest: Buffer }) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (e) reject(e);
      else resolve(read ?? { line: '', rest: Buffer.alloc(0) });
    };
    const timer = setTimeout(
      () => done(refused(peer, `no answer to the challenge within ${PROOF_WAIT_MS} ms`)),
      PROOF_WAIT_MS,
    );
    const onClose = () => done(refused(peer, `the ${peer} closed the connection`));
    const onData = (d: Buffer) => {
      const first = input.firstLine(d);
      if (input.overLimit) done(refused(peer, `an answer over ${MAX_PROOF_BYTES} bytes`));
      else if (first) done(undefined, first);
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

/** What the peer showed, and what it sent after its proof (a bridge's first MCP lines). */
export type Proof = { ancestors: number[]; rest: Buffer } | { refused: BusError; rest: Buffer };

/**
 * A challenge: a fresh 0600 file in the hub's private directory `dir` (already resolved: readlink
 * shows real paths). `answer` reads the peer's proof: its ancestry (the peer's pid first, as the
 * kernel has it), or `not_your_channel` when the peer cannot show it is that process. The file is
 * gone once it settles.
 */
export function challenge(dir: string, peer: Peer): { path: string; answer(socket: Socket): Promise<Proof> } {
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
  const check = (line: string): number[] | BusError => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return refused(peer, 'the answer is not JSON');
    }
    const proof = processProof.safeParse(value);
    if (!proof.success) return refused(peer, 'the answer is not {"pid": N}');
    if (!holds(proof.data.pid, path))
      return refused(peer, `process ${proof.data.pid} does not hold the challenge file open`);
    return lineage(proof.data.pid);
  };
  const answer = async (socket: Socket): Promise<Proof> => {
    try {
      const { line, rest } = await nextLine(socket, peer);
      const checked = check(line);
      return Array.isArray(checked) ? { ancestors: checked, rest } : { refused: checked, rest };
    } catch (e) {
      return { refused: e as BusError, rest: Buffer.alloc(0) };
    } finally {
      try {
        unlinkSync(path);
      } catch {
        // already gone: nothing to clean
      }
    }
  };
  return { path, answer };
}

/** Challenges a hook on its own connection, after its hello reply: its ancestry, the hook first. */
export async function proveHook(socket: Socket, dir: string): Promise<number[]> {
  const c = challenge(dir, 'hook');
  const line: HookChallenge = { challenge: c.path };
  socket.write(`${JSON.stringify(line)}\n`);
  const proof = await c.answer(socket);
  if ('refused' in proof) throw proof.refused;
  return proof.ancestors;
}

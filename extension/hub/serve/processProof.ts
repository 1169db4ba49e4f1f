// Which process a hook or a bridge is, as the kernel knows it (#23). A hello states its ancestry,
// and a process can state anything; Node cannot read a unix socket peer's credentials. So the hub
// creates a fresh file only it and its user can reach, the peer opens it and answers with its pid,
// and the hub finds that very file among /proc/<pid>/fd by device and inode, never by name (a
// rename puts the name on any file another process holds). Proven: the pid holds the file the hub
// created, so it opened the path after the hub named it, or was given the fd by one that did. The
// hub holds the file until answered, so its inode is not reused. The ancestry is read from /proc
// itself. Linux only.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { MAX_PROOF_BYTES, type HookChallenge } from '../../protocol/hook';
import { processProof } from '../../protocol/helloSchema';
import { BusError } from '../bus/errors';
import { ensurePrivateDir } from '../../shared/paths';
import { ancestry } from '../../shared/proc';
import { powers } from '../../shared/platform/powers';
import { firstLine } from './firstLine';

/** A hook answers within its own 120 ms budget; this is only the bound on a peer that never does. */
const PROOF_WAIT_MS = 2000;
/** A hook or bridge holds a few dozen fds; a pid holding more is not one, and is not read through. */
const MAX_FDS = 1024;

export const canProve = powers.procfs;

export type Peer = 'hook' | 'bridge';

/** Why a peer's answer did not come, as its refusal says. */
const MISSING = {
  late: () => `no answer to the challenge within ${PROOF_WAIT_MS} ms`,
  closed: (peer: Peer) => `the ${peer} closed the connection`,
  over: () => `an answer over ${MAX_PROOF_BYTES} bytes`,
};

function refused(peer: Peer, why: string): BusError {
  return new BusError(
    'not_your_channel',
    `not_your_channel: could not prove which process this ${peer} is (${why}). ${peer === 'hook' ? 'Nothing was surfaced.' : 'Nothing it asks is recorded.'}`,
  );
}

/** A file as the kernel knows it, whatever its name is now. */
type FileId = { dev: bigint; ino: bigint };

/** Whether `pid` holds `file` open right now. */
function holds(pid: number, file: FileId): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  if (fds.length > MAX_FDS) return false;
  return fds.some((fd) => {
    try {
      const held = statSync(`/proc/${pid}/fd/${fd}`, { bigint: true });
      return held.dev === file.dev && held.ino === file.ino;
    } catch {
      return false;
    }
  });
}

/** Whether `pid` names a process other than the hub: a thread's id shows its process's files too. */
function anotherProcess(pid: number): boolean {
  try {
    return (
      pid !== process.pid && /^Tgid:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] === String(pid)
    );
  } catch {
    return false;
  }
}

/** What the peer showed, and what it sent after its proof (a bridge's first MCP lines). */
export type Proof = { ancestors: number[]; rest: Buffer } | { refused: BusError; rest: Buffer };

/**
 * A challenge: a fresh 0600 file in the hub's private directory `dir`. `answer` reads the peer's
 * proof: its ancestry (the peer's pid first, as the kernel has it), or `not_your_channel` when
 * the peer cannot show it is that process. The file is gone once it settles. Throws when the file
 * cannot be created (a full or read-only runtime folder).
 */
export function challenge(dir: string, peer: Peer): { path: string; answer(socket: Socket): Promise<Proof> } {
  const path = join(dir, randomBytes(16).toString('hex'));
  // O_EXCL|O_NOFOLLOW: a fresh file of our own, never one planted under that name.
  const create = () =>
    openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600);
  let fd: number;
  try {
    fd = create();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    ensurePrivateDir(dir); // a temp cleaner took the directory of an idle hub: every hook would fail
    fd = create();
  }
  const { dev, ino } = fstatSync(fd, { bigint: true });
  const check = (line: string): number[] | BusError => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return refused(peer, 'the answer is not JSON');
    }
    const proof = processProof.safeParse(value);
    if (!proof.success) return refused(peer, 'the answer is not {"pid": N}');
    const { pid } = proof.data;
    // The hub holds the file too, until answered.
    if (!anotherProcess(pid) || !holds(pid, { dev, ino }))
      return refused(peer, `process ${pid} does not hold the challenge file open`);
    return [pid, ...ancestry(pid)];
  };
  const answer = async (socket: Socket): Promise<Proof> => {
    try {
      const read = await firstLine(socket, MAX_PROOF_BYTES, PROOF_WAIT_MS);
      if ('missing' in read) return { refused: refused(peer, MISSING[read.missing](peer)), rest: Buffer.alloc(0) };
      const checked = check(read.line);
      return Array.isArray(checked) ? { ancestors: checked, rest: read.rest } : { refused: checked, rest: read.rest };
    } finally {
      closeSync(fd);
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

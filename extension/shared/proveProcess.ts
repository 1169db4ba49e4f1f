// The peer's side of the hub's process proof (hub/serve/processProof.ts, protocol/hook.ts): open
// the file the hub named, keep it open while the hub looks, and answer with our pid.
import { closeSync, constants, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import { MAX_CHALLENGE_PATH, type ProcessProof } from '../protocol/hook';

/** The challenge path in a hub's line, or undefined if the line names none we would open. */
export function challengeOf(value: unknown): string | undefined {
  const c = (value as { challenge?: unknown } | null)?.challenge;
  return typeof c === 'string' && c.startsWith('/') && c.length <= MAX_CHALLENGE_PATH ? c : undefined;
}

/**
 * Opens `path` and answers with our pid; the file stays open until the socket closes. O_NONBLOCK
 * so a FIFO under that name cannot hold us. Our pid either way: a hub that cannot find the file
 * refuses, and says why.
 */
export function proveProcess(socket: Socket, path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    // the hub refuses
  }
  if (fd !== undefined) {
    const opened = fd;
    socket.once('close', () => {
      try {
        closeSync(opened);
      } catch {
        // closed already
      }
    });
  }
  const proof: ProcessProof = { pid: process.pid };
  socket.write(`${JSON.stringify(proof)}\n`);
}

// Serves one hook exchange on the hub socket: the hello is the request (validated here, the hook
// is untrusted input like any socket line), one line answers it; when the answer carries handoffs
// the hook writes `ack` once it has handed them to its CLI, and only then are they journaled as
// surfaced. A hook that never confirms (cut off by its budget, killed) surfaces nothing. On Linux
// the hook first proves which process it is (processProof.ts): its stated ancestry is not used.
import type { Socket } from 'node:net';
import { HOOK_ACK, type HookHello } from '../../protocol/hook';
import { hookHello } from '../../protocol/helloSchema';
import type { Claim } from '../deliver/attention';
import type { Hub } from '../hub';
import type { Log } from '../../protocol/hubLog';
import { BusError } from '../bus/errors';
import { proveHook } from './processProof';
import { firstLine } from './firstLine';

/** How long the hub waits for the hook's `ack` before it frees the claim. */
const ACK_WAIT_MS = 5000;
/** An answer longer than this is not `ack`. */
const ACK_MAX_BYTES = 64;

function confirm(socket: Socket, claim: Claim, log: Log): void {
  void firstLine(socket, ACK_MAX_BYTES, ACK_WAIT_MS).then((read) => {
    socket.destroy();
    const delivered = 'line' in read && read.line === HOOK_ACK;
    claim.settle(delivered).catch((e: Error) => log(`could not record a surfacing: ${e.message}`, 'error'));
  });
}

/**
 * `proofDir`: the hub's private directory for challenges, where the hub can prove a hook's process
 * (Linux); without it the hello's stated ancestry is taken as it is.
 */
export function serveHook(hub: Hub, socket: Socket, hello: unknown, log: Log, proofDir?: string): void {
  socket.on('error', () => undefined);
  const parsed = hookHello.safeParse(hello);
  if (!parsed.success) {
    socket.end(
      `${JSON.stringify({ error: `bad hook request: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` })}\n`,
    );
    return;
  }
  const stated = parsed.data as HookHello;
  const refuse = (e: Error) => {
    log(`hook ${stated.cli} ${stated.event} for ${stated.identity}: ${e.message}`, 'warn');
    const code = e instanceof BusError ? { code: e.code } : {};
    socket.end(`${JSON.stringify({ error: e.message, ...code })}\n`);
  };
  const proven = proofDir
    ? proveHook(socket, proofDir).then((ancestors) => ({ ...stated, ancestors }))
    : Promise.resolve(stated);
  proven
    .then((h) => {
      socket.resume();
      return hub.attention.hook(h, (cancel) => socket.once('close', cancel), !proofDir);
    })
    .then((claim) => {
      if (socket.destroyed) return void claim.settle(false);
      if (claim.answer.items.length === 0) {
        hub.answeredQuiet(stated.identity);
        return void socket.end(`${JSON.stringify(claim.answer)}\n`);
      }
      socket.write(`${JSON.stringify(claim.answer)}\n`);
      confirm(socket, claim, log);
    }, refuse);
  if (!proofDir) socket.resume();
}

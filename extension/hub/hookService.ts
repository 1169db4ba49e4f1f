// Serves one hook exchange on the hub socket: the hello is the request (validated here, the hook
// is untrusted input like any socket line), one result line answers it, then the socket closes.
import type { Socket } from 'node:net';
import { z } from 'zod';
import { HOOK_CLIS, HOOK_PHASES, type HookHello } from '../shared/hook';
import { IDENTITY_PATTERN } from './bus/identity';
import type { Hub } from './hub';

const hookHello = z.object({
  handoff: z.literal(1),
  kind: z.literal('hook'),
  cli: z.enum(HOOK_CLIS),
  phase: z.enum(HOOK_PHASES),
  event: z.string().max(64),
  identity: z.string().regex(IDENTITY_PATTERN),
  session: z.string().min(1).max(200),
  ancestors: z.array(z.number().int().positive()).max(16),
  waitMs: z.number().int().min(0).max(3_600_000).optional(),
});

/** Answers `{error}` for a malformed request: the hook prints nothing and the agent goes on. */
export function serveHook(hub: Hub, socket: Socket, hello: unknown, log: (line: string) => void): void {
  const parsed = hookHello.safeParse(hello);
  const reply = (body: unknown) => {
    if (!socket.destroyed) socket.end(`${JSON.stringify(body)}\n`);
  };
  if (!parsed.success) {
    reply({ error: `bad hook request: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` });
    return;
  }
  const h = parsed.data as HookHello;
  hub.attention.hook(h, (cancel) => socket.once('close', cancel)).then(reply, (e: Error) => {
    log(`hook ${h.cli} ${h.event} for ${h.identity}: ${e.message}`);
    reply({ error: e.message });
  });
  socket.on('error', () => undefined);
  socket.resume();
}

// Handoff as agents reach it: the MCP SDK client spawns the real bridge (dist/bridge.js), which
// talks to a real hub process (dist/hub.js) — the same parts bridge.bench.ts measures.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectAgent, plainBody } from '../../helpers/agent';
import { ROOT, startHub } from '../../helpers/hubProcess';
import { recordNotifications, type Bus, type Mailbox } from './bus';

export async function startHandoff(): Promise<Bus> {
  let hub = await startHub();
  return {
    name: 'Handoff',
    version: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
    transport: 'stdio (dist/bridge.js → hub socket)',
    serverPid: () => hub.proc.pid!,
    async open(name): Promise<Mailbox> {
      const agent = await connectAgent({ socket: hub.socket, name });
      return {
        name,
        notifications: recordNotifications(agent.client),
        send: async (to, body) => void (await agent.ok('send_handoff', { to, body })),
        async read() {
          const bodies: string[] = [];
          let after: number | undefined;
          do {
            const page = await agent.ok('inbox', { limit: 200, ...(after === undefined ? {} : { after_seq: after }) });
            bodies.push(...page.messages.map(plainBody));
            after = page.next_after_seq;
          } while (after !== undefined);
          return bodies;
        },
        close: () => agent.close(),
      };
    },
    kill9: () => hub.kill9(),
    async restart() {
      hub = await hub.restart();
    },
    stop: () => hub.stop(),
  };
}

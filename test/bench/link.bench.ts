// A handoff to another repository on this machine (linked hubs, hub/link/) against one inside a
// repository, side by side in alternating rounds: real hubs, real bridges, real MCP SDK clients.
// Measured from the send_handoff call to the push arriving at the recipient's client, and the
// send's own answer (across the link it waits until the other hub holds the handoff). Medians;
// the ratio is what counts on a shared machine.
//   node esbuild.mjs && node out/test/bench/link.bench.js [--quick]
import { connectAgent, type Agent } from '../helpers/agent';
import { linkBoth, linkState, repoHub } from '../helpers/linkedHubs';
import { body, median, p95 } from './stats';

const SAMPLES = process.argv.includes('--quick') ? 30 : 150;

/** Resolves at the agent's next push. */
function nextPush(agent: Agent): () => Promise<void> {
  let resolve: (() => void) | undefined;
  const handler = agent.client.fallbackNotificationHandler!;
  agent.client.fallbackNotificationHandler = async (n) => {
    await handler(n);
    if (n.method === 'notifications/claude/channel') resolve?.();
  };
  return () => new Promise<void>((r) => (resolve = r));
}

async function main(): Promise<void> {
  const backend = await repoHub('backend');
  const frontend = await repoHub('frontend');
  const agents: Agent[] = [];
  try {
    await linkBoth(backend, frontend);
    const alice = await connectAgent({ socket: backend.socket, name: 'alice', session: 'alice-1' });
    const carol = await connectAgent({ socket: backend.socket, name: 'carol', session: 'carol-1' });
    const bob = await connectAgent({ socket: frontend.socket, name: 'bob', session: 'bob-1' });
    agents.push(alice, carol, bob);
    await linkState(backend, frontend.workspace, 'linked', 'bob');
    const to = {
      here: { name: 'carol', next: nextPush(carol) },
      linked: { name: 'bob@frontend', next: nextPush(bob) },
    };
    const lat = { here: [] as number[], linked: [] as number[] };
    const answer = { here: [] as number[], linked: [] as number[] };
    for (let i = 0; i < SAMPLES * 2; i++) {
      const which = i % 2 === 0 ? 'here' : 'linked';
      const pushed = to[which].next();
      const t = performance.now();
      await alice.ok('send_handoff', { to: to[which].name, body: body(i), requires_ack: false });
      answer[which].push(performance.now() - t);
      await pushed;
      lat[which].push(performance.now() - t);
    }
    const f = (xs: number[]) => `median ${median(xs).toFixed(2)} ms, p95 ${p95(xs).toFixed(2)} ms`;
    console.log(`link bench: ${SAMPLES} handoffs each way, alternating, through the real bridges`);
    console.log(`  send → push, inside one repository:    ${f(lat.here)}`);
    console.log(`  send → push, to a linked repository:   ${f(lat.linked)}`);
    console.log(`  ratio (linked / inside), medians:      ×${(median(lat.linked) / median(lat.here)).toFixed(2)}`);
    console.log(`  send's answer, inside one repository:  ${f(answer.here)}`);
    console.log(`  send's answer, to a linked repository: ${f(answer.linked)} (waits until the other hub holds it)`);
    console.log(
      `  ratio (linked / inside), medians:      ×${(median(answer.linked) / median(answer.here)).toFixed(2)}`,
    );
  } finally {
    for (const a of agents) await a.close().catch(() => undefined);
    await Promise.all([backend.stop(), frontend.stop()]);
  }
}

void main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

// Two linked repositories' hubs, each killed -9 mid-delivery in turn, the link removed mid-flight
// and made again, and the other one's hub started long after handoffs were sent to it: every acknowledged handoff reaches its recipient in
// the other repository, none twice (no second push that is not flagged replayed), and each
// sender's outbox drains. Real hubs, real bridges, real MCP SDK clients.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { waitUntil } from '../helpers/wait';
import type { HubProcess } from '../helpers/hubProcess';
import { handoff, linkBoth, linksOf, linkState, repoHub } from '../helpers/linkedHubs';

const ROUNDS = Number(process.env.HANDOFF_LINK_KILL9_ROUNDS) || 6;
const PER_ROUND = 6;

/** Pushes of each message that were not flagged replayed: more than one is a duplicate. */
function unflagged(agent: Agent): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of agent.pushes)
    if (p.meta.replayed !== 'true') counts.set(p.meta.message_id, (counts.get(p.meta.message_id) ?? 0) + 1);
  return counts;
}

async function inboxIds(bob: Agent): Promise<string[]> {
  const r = await bob.ok('inbox', { limit: 200 });
  return (r.messages as { message_id: string }[]).map((m) => m.message_id);
}

describe('linked repositories under kill -9', () => {
  it(`${ROUNDS} kills -9 of either hub mid-delivery, a link removed mid-flight, and a hub started long after: 0 lost, 0 duplicated`, async () => {
    let backend: HubProcess = await repoHub('backend');
    let frontend: HubProcess = await repoHub('frontend');
    const agents: Agent[] = [];
    try {
      await linkBoth(backend, frontend);
      const bob = await connectAgent({ socket: frontend.socket, name: 'bob', session: 'bob-1' });
      const alice = await connectAgent({ socket: backend.socket, name: 'alice', session: 'alice-1' });
      agents.push(bob, alice);
      await linkState(backend, frontend.workspace, 'linked', 'bob');
      const acknowledged = new Set<string>();
      let attempted = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const killBackend = round % 2 === 1;
        const sends = Array.from({ length: PER_ROUND }, (_, i) => {
          attempted++;
          return alice.call('send_handoff', { to: 'bob@frontend', body: `round ${round} handoff ${i}` });
        });
        // sleep: a random instant inside the burst to kill at; no event marks "mid-delivery"
        await new Promise((r) => setTimeout(r, Math.random() * 40));
        if (killBackend) {
          await backend.kill9();
          backend = await backend.restart();
        } else {
          await frontend.kill9();
          frontend = await frontend.restart();
        }
        for (const r of await Promise.allSettled(sends))
          if (r.status === 'fulfilled' && !r.value.isError) acknowledged.add(r.value.structuredContent.message_id);
      }
      // The link removed mid-flight (on the recipient's side), then made again.
      const burst = Array.from({ length: PER_ROUND }, (_, i) => {
        attempted++;
        return alice.call('send_handoff', { to: 'bob@frontend', body: `unlinked mid-flight ${i}` });
      });
      // sleep: a random instant inside the burst to unlink at
      await new Promise((r) => setTimeout(r, Math.random() * 40));
      await handoff(frontend, 'unlink', backend.workspace);
      for (const r of await Promise.allSettled(burst))
        if (r.status === 'fulfilled' && !r.value.isError) acknowledged.add(r.value.structuredContent.message_id);
      await handoff(frontend, 'link', backend.workspace);
      await linkState(backend, frontend.workspace, 'linked');

      // The other hub started long after the send: handoffs wait in the outbox, then go once.
      await frontend.kill9();
      await linkState(backend, frontend.workspace, 'down');
      const late: string[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        attempted++;
        const r = await alice.ok('send_handoff', { to: 'bob@frontend', body: `while frontend is down ${i}` });
        assert.equal(r.state, 'queued');
        assert.equal(r.relay.state, 'in_outbox');
        late.push(r.message_id);
        acknowledged.add(r.message_id);
      }
      assert.equal((await linksOf(backend)).links[0].outbox >= PER_ROUND, true);
      await backend.kill9(); // and the sender's hub restarts meanwhile too
      backend = await backend.restart();
      frontend = await frontend.restart();

      await waitUntil(
        async () => {
          const have = new Set(await inboxIds(bob).catch(() => []));
          return [...acknowledged].every((id) => have.has(id));
        },
        60_000,
        () => `all ${acknowledged.size} acknowledged handoffs in bob's inbox`,
      );
      await waitUntil(async () => (await linksOf(backend)).links[0].outbox === 0, 30_000, "backend's outbox to drain");
      const ids = await inboxIds(bob);
      const lost = [...acknowledged].filter((id) => !ids.includes(id));
      const duplicatedInInbox = ids.length - new Set(ids).size;
      const pushedTwice = [...unflagged(bob)].filter(([, n]) => n > 1);
      // Everything in bob's inbox was sent by alice: unacknowledged sends may have landed (their reply was lost).
      console.log(
        `# link kill -9: ${ROUNDS} kills + 1 unlink mid-flight + 1 late start, ${attempted} sends, ${acknowledged.size} acknowledged, ${ids.length} delivered, ${lost.length} lost, ${duplicatedInInbox + pushedTwice.length} duplicated`,
      );
      assert.deepEqual(lost, [], 'lost');
      assert.equal(duplicatedInInbox, 0, 'duplicated in the inbox');
      assert.deepEqual(pushedTwice, [], 'pushed twice without the replayed flag');
      assert.ok(ids.length <= attempted);
    } finally {
      for (const a of agents) await a.close().catch(() => undefined);
      await Promise.all([backend.stop(), frontend.stop()]);
    }
  });
});

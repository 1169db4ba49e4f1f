// Synapse's default message rate limit (rc_message: 0.2/s, burst 10) restored: the outboxes of
// both hubs meet 429 M_LIMIT_EXCEEDED, wait retry_after_ms, and retry with the same txnId.
// Nothing is lost, nothing arrives twice, every ACK comes back.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import type { HubProcess } from '../helpers/hubProcess';
import {
  autoAck,
  countPushes,
  matrixHub,
  matrixSuite,
  stopAll,
  synapse,
  unique,
  user,
  waitFor,
  waitPeer,
  waitUntil,
  type Synapse,
} from './world';

const N = 14;

matrixSuite('Matrix: rate limited by the homeserver', () => {
  let hs: Synapse | undefined;
  const hubs: HubProcess[] = [];
  const agents: Agent[] = [];
  let stopAck = () => undefined as void;
  after(async () => {
    stopAck();
    await stopAll(agents, hubs, hs);
  });

  it(`${N} handoffs and their ACKs through 429s: none lost, none twice`, async () => {
    const t0 = Date.now();
    hs = await synapse({ defaultMessageRateLimit: true });
    const tag = unique();
    const a = await user(hs, `a-${tag}`);
    const b = await user(hs, `b-${tag}`);
    const room = `#rl-${tag}:${hs.serverName}`;
    const hubA = await matrixHub(hs, { node: 'nodeA', user: a, room, allowed: [b.userId], relayWaitMs: 200 });
    const hubB = await matrixHub(hs, { node: 'nodeB', user: b, room, allowed: [a.userId] });
    hubs.push(hubA, hubB);
    const alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
    const bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
    agents.push(alice, bob);
    stopAck = autoAck(bob);
    await waitPeer(alice, 'bob@nodeB');

    const ids: string[] = [];
    const notYet: string[] = [];
    const limited: string[] = [];
    for (let i = 0; i < N; i++) {
      const r = await alice.ok('send_handoff', { to: 'bob', body: `rate limited ${tag} #${i}` });
      ids.push(r.message_id);
      if (r.relay.state === 'in_outbox') notYet.push(r.message_id);
      if (r.relay.state === 'in_outbox' && /M_LIMIT_EXCEEDED/.test(r.relay.last_error ?? ''))
        limited.push(r.message_id);
    }
    const want = new Set(ids);
    await waitFor(() => countPushes([bob], want).unflagged.size === N, 120_000).catch(() => undefined); // the counts say what is missing
    let pending: any[] = [];
    await waitUntil(
      async () => {
        pending = (await alice.ok('pending')).pending.filter((e: any) => want.has(e.id));
        return pending.length === N && pending.every((e) => e.recipients[0].state === 'acked');
      },
      120_000,
      'every ACK at the sender',
      250,
    ).catch(() => undefined); // the assertions below say which are not
    // A second push of one would come before a later handoff: hub B pushes in the room's order.
    const later = (await alice.ok('send_handoff', { to: 'bob', body: `rate limited ${tag}, later` })).message_id;
    await waitFor(() => bob.pushes.some((p) => p.meta.message_id === later), 120_000, 'a later handoff');
    const { unflagged, flagged } = countPushes([bob], want);
    const twice = [...unflagged].filter(([, n]) => n > 1).length;
    console.log(
      `# rate limited: ${N} sent, ${notYet.length} replies said "in outbox" (${limited.length} naming the 429), lost ${N - unflagged.size}, twice ${twice}, ` +
        `acked at sender ${pending.filter((e) => e.recipients[0].state === 'acked').length}/${N}, ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    assert.match(hubA.log(), /429 M_LIMIT_EXCEEDED/, 'the sender hub really was rate limited');
    // The burst allows 10 events (the node announcement is one): later sends cannot be on the
    // homeserver within the 200 ms relay wait, and their replies must say so.
    assert.ok(notYet.length > 0, 'some send replies honestly said the homeserver had not taken it yet');
    assert.equal(unflagged.size, N, 'lost');
    assert.equal(twice, 0, 'twice');
    assert.equal(flagged, 0);
    assert.ok(pending.length === N && pending.every((e) => e.recipients[0].state === 'acked'), 'every ACK came back');
  });
});

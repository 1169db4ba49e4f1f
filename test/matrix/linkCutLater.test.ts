// TEMPORARY (investigation): the federation link-cut case with a later handoff sent right after the
// link comes back. Delete when done.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { tempDir, type HubProcess } from '../helpers/hubProcess';
import { startSynapse } from './synapse.mjs';
import {
  api,
  autoAck,
  crashAndReturn,
  countPushes,
  matrixHub,
  matrixSuite,
  snapshot,
  stopAll,
  unique,
  user,
  waitUntil,
  type MatrixUser,
  type Synapse,
} from './world';
import { waitMatrix, waitPeer } from './world';

const OUT = process.env.LINKCUT_OUT ?? tempDir('linkcut-out');
const dirs: string[] = [];
const federating = () => {
  const dir = tempDir('synapse-fed');
  dirs.push(dir);
  return startSynapse({ dir, federation: true }) as Promise<Synapse>;
};
const t0 = Date.now();
const notes: string[] = [];
const note = (s: string) => {
  const line = `${new Date().toISOString()} +${((Date.now() - t0) / 1000).toFixed(1)}s ${s}`;
  notes.push(line);
  console.log(`# ${line}`);
};

matrixSuite('TEMP link cut with a later handoff', () => {
  let hs1: Synapse;
  let hs2: Synapse;
  let a: MatrixUser;
  let b: MatrixUser;
  let dan: MatrixUser;
  let carol: MatrixUser;
  let room: string;
  let roomId: string;
  let hubA: HubProcess;
  let hubB: HubProcess;
  let alice: Agent;
  let bob: Agent;
  const agents: Agent[] = [];
  const hubs: HubProcess[] = [];
  const stops: (() => void)[] = [];

  const dump = (tag: string) => {
    mkdirSync(OUT, { recursive: true });
    hubs.forEach((h, i) => writeFileSync(join(OUT, `${tag}-hub${i}.log`), h.log()));
    writeFileSync(join(OUT, `${tag}-hubA-current.log`), hubA.log());
    writeFileSync(join(OUT, `${tag}-hubB-current.log`), hubB.log());
    writeFileSync(join(OUT, `${tag}-notes.log`), notes.join('\n') + '\n');
    dirs.forEach((d, i) => {
      for (const f of ['homeserver.log', 'synapse.stdio.log'])
        if (existsSync(join(d, f))) copyFileSync(join(d, f), join(OUT, `${tag}-hs${i + 1}-${f}`));
    });
    writeFileSync(join(OUT, `${tag}-dirs.txt`), dirs.join('\n') + '\n');
  };

  before(async () => {
    [hs1, hs2] = await Promise.all([federating(), federating()]);
    const tag = unique();
    a = await user(hs1, `a-${tag}`);
    b = await user(hs2, `b-${tag}`);
    dan = await user(hs1, `dan-${tag}`);
    carol = await user(hs2, `carol-${tag}`);
    room = `#org-${tag}:${hs1.serverName}`;
    const people = [dan.userId, carol.userId];
    hubA = await matrixHub(hs1, { node: 'nodeA', user: a, room, allowed: [b.userId, ...people], people, relayWaitMs: 3000 });
    hubB = await matrixHub(hs2, { node: 'nodeB', user: b, room, allowed: [a.userId, ...people], people, relayWaitMs: 3000 });
    hubs.push(hubA, hubB);
    roomId = (await snapshot(hubA)).link!.room!;
    await api(hs1, dan.accessToken, 'POST', `/join/${encodeURIComponent(roomId)}`, {});
    await api(hs2, carol.accessToken, 'POST', `/join/${encodeURIComponent(roomId)}?server_name=${encodeURIComponent(hs1.serverName)}`, {});
    alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
    bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
    agents.push(alice, bob);
    await waitPeer(alice, 'bob@nodeB', 30_000);
    await waitPeer(bob, 'alice@nodeA', 30_000);
    // A first handoff across, as the suite's first case does, so the link is warm.
    const first = await alice.ok('send_handoff', { to: 'bob', body: 'warm up' });
    await bob.waitForPushes(1, 30_000);
    await bob.ok('ack', { message_id: first.message_id });
    note(`setup done; room ${roomId}; dirs ${dirs.join(' ')}`);
  });
  after(async () => {
    stops.forEach((s) => s());
    await stopAll(agents, hubs, undefined);
    await Promise.all([hs1?.stop(), hs2?.stop()]);
  });

  it('link cut, both hubs kill -9, a later handoff right after the link returns', async () => {
    const N = 24;
    const gates = [hs1.federationLink!, hs2.federationLink!];
    const ids: string[] = [];
    const send = async (i: number) => {
      const r = await alice.ok('send_handoff', { to: 'bob', body: `across a cut link #${i}` });
      ids.push(r.message_id);
      assert.equal(r.relay.state, 'on_homeserver', `#${i}: ${JSON.stringify(r.relay)}`);
    };
    const cutAt = Date.now();
    await Promise.all(gates.map((g) => g.cut()));
    for (let i = 0; i < N / 2; i++) await send(i);
    [hubA, alice] = await crashAndReturn(hubA, alice, 'alice-1', hubs, agents);
    [hubB, bob] = await crashAndReturn(hubB, bob, 'bob-1', hubs, agents);
    stops.push(autoAck(bob));
    await waitMatrix(hubA, 'connected', 30_000);
    for (let i = N / 2; i < N; i++) await send(i);
    const want = new Set(ids);
    const bobs = agents.filter((x) => x.name === 'bob');
    const reached = () => bobs.some((x) => x.pushes.some((p) => want.has(p.meta.message_id)));
    assert.equal(reached(), false, 'nothing reached bob while the link is cut');
    await new Promise((r) => setTimeout(r, Math.max(0, 60_000 - (Date.now() - cutAt))));
    await Promise.all(gates.map((g) => g.restore()));
    const restoredAt = Date.now();
    note('link restored');

    // The later handoff, right after the link came back.
    const later = await alice.ok('send_handoff', { to: 'bob', body: 'after the link came back' });
    note(`later ${later.message_id} sent: relay ${JSON.stringify(later.relay)}`);
    let got = false;
    const until = Date.now() + 60_000;
    let lastPoll = 0;
    while (Date.now() < until) {
      if (bobs.some((x) => x.pushes.some((p) => p.meta.message_id === later.message_id))) {
        got = true;
        break;
      }
      if (Date.now() - lastPoll > 5000) {
        lastPoll = Date.now();
        const s = await snapshot(hubA).catch((e) => ({ link: String(e) }) as any);
        const r = await alice.ok('get_receipts', { message_id: later.message_id }).catch((e: Error) => e.message);
        const reachedN = ids.filter((id) => bobs.some((x) => x.pushes.some((p) => p.meta.message_id === id))).length;
        note(
          `waiting: hubA link ${JSON.stringify({ state: s.link?.state, error: s.link?.error, outbox: s.link?.outbox, lastSyncAt: s.link?.lastSyncAt })}; later ${JSON.stringify(r?.deliveries?.[0]?.state ?? r)}; earlier at bob ${reachedN}/${N}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const laterMs = Date.now() - restoredAt;
    note(`later handoff ${got ? 'reached' : 'DID NOT reach'} bob ${(laterMs / 1000).toFixed(1)} s after restore`);

    const pendingAll = async () => (await alice.ok('pending')).pending.filter((e: any) => want.has(e.id));
    let pending: any[] = [];
    await waitUntil(
      async () => {
        pending = await pendingAll();
        return pending.every((e) => e.recipients[0].state === 'acked');
      },
      120_000,
      'every ACK back at the sender',
      200,
    ).catch(() => undefined);
    const { unflagged } = countPushes(bobs, want);
    const lost = ids.filter((id) => !bobs.some((x) => x.pushes.some((p) => p.meta.message_id === id)));
    const twice = [...unflagged].filter(([, n]) => n > 1);
    const acked = pending.filter((e) => e.recipients[0].state === 'acked').length;
    note(`drained ${((Date.now() - restoredAt) / 1000).toFixed(1)} s: lost ${lost.length}, twice ${twice.length}, acked ${acked}/${N}`);
    dump(got ? 'ok' : 'FAIL');
    assert.ok(got, `later handoff not at bob within 60 s (logs in ${OUT})`);
    assert.deepEqual(lost, [], 'lost');
    assert.deepEqual(twice, [], 'pushed twice');
    assert.equal(acked, N, 'acked');
  });
});

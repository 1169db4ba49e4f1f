// Two organisations: two real Synapse homeservers federating on loopback, a hub on each with an
// account of its own server, one room that lives on the first. A handoff and its receipts cross
// both ways through federation; then a stream goes on while the second homeserver is stopped and
// restarted and both hubs are killed with SIGKILL meanwhile — counted at the end: nothing
// acknowledged lost, nothing pushed twice, every ACK back at the sender. Last, the federation link
// between the two servers is cut for a minute (linkGate.mjs) with both hubs killed during it.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { connectAgent, plainBody, type Agent } from '../helpers/agent';
import { tempDir, type HubProcess } from '../helpers/hubProcess';
import { startSynapse } from './synapse.mjs';
import { personIdentity } from '../../extension/hub/matrix/person';
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
  waitFor,
  waitMatrix,
  waitPeer,
  waitUntil,
  type MatrixUser,
  type Synapse,
} from './world';

const federating = () => startSynapse({ dir: tempDir('synapse-fed'), federation: true }) as Promise<Synapse>;

matrixSuite('Matrix across organisations: two federated homeservers', () => {
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

  /**
   * A handoff after a stream: hub B pushes in the room's order, so a duplicate would come before it.
   * Each caller gives its own body: the same body to bob again inside the hub's probable-duplicate
   * window (10 min) is answered with the first message, and nothing new is sent.
   */
  const laterHandoff = (body: string) => async () => {
    const later = await alice.ok('send_handoff', { to: 'bob', body });
    assert.equal(later.duplicate, undefined, `a later handoff answered as a duplicate: ${JSON.stringify(later)}`);
    await waitFor(
      () => bob.pushes.some((p) => p.meta.message_id === later.message_id),
      60_000,
      () => `a later handoff (relay ${JSON.stringify(later.relay)}); hub B:\n${hubB.log().slice(-3000)}`,
    );
  };

  /**
   * Waits (bounded) for every ACK of `ids` back at alice, then for `then` (a later handoff, which
   * any duplicate would come before), and counts what bob's sessions got: the caller asserts the
   * figures, so a shortfall reads as counts, not as a timeout.
   */
  const settle = async (ids: string[], then?: () => Promise<void>) => {
    const want = new Set(ids);
    const bobs = agents.filter((x) => x.name === 'bob');
    let pending: any[] = [];
    await waitUntil(
      async () => {
        pending = (await alice.ok('pending')).pending.filter((e: any) => want.has(e.id));
        return pending.every((e) => e.recipients[0].state === 'acked');
      },
      120_000,
      'every ACK back at the sender',
      200,
    ).catch(() => undefined);
    await then?.();
    const { unflagged } = countPushes(bobs, want);
    return {
      pending,
      twice: [...unflagged].filter(([, n]) => n > 1),
      lost: ids.filter((id) => !bobs.some((x) => x.pushes.some((p) => p.meta.message_id === id))),
      acked: pending.filter((e) => e.recipients[0].state === 'acked').length,
    };
  };

  before(async () => {
    [hs1, hs2] = await Promise.all([federating(), federating()]);
    assert.notEqual(hs1.serverName, hs2.serverName);
    const tag = unique();
    a = await user(hs1, `a-${tag}`);
    b = await user(hs2, `b-${tag}`);
    // A person on each server, in a plain client of their own server.
    dan = await user(hs1, `dan-${tag}`);
    carol = await user(hs2, `carol-${tag}`);
    // The room is on the first server; hub B joins it through federation.
    room = `#org-${tag}:${hs1.serverName}`;
    const people = [dan.userId, carol.userId];
    hubA = await matrixHub(hs1, {
      node: 'nodeA',
      user: a,
      room,
      allowed: [b.userId, ...people],
      people,
      relayWaitMs: 3000,
    });
    hubB = await matrixHub(hs2, {
      node: 'nodeB',
      user: b,
      room,
      allowed: [a.userId, ...people],
      people,
      relayWaitMs: 3000,
    });
    hubs.push(hubA, hubB);
    roomId = (await snapshot(hubA)).link!.room!;
    await api(hs1, dan.accessToken, 'POST', `/join/${encodeURIComponent(roomId)}`, {});
    await api(
      hs2,
      carol.accessToken,
      'POST',
      `/join/${encodeURIComponent(roomId)}?server_name=${encodeURIComponent(hs1.serverName)}`,
      {},
    );
    alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
    bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
    agents.push(alice, bob);
    await waitPeer(alice, 'bob@nodeB', 30_000);
    await waitPeer(bob, 'alice@nodeA', 30_000);
  });
  after(async () => {
    stops.forEach((s) => s());
    await stopAll(agents, hubs, undefined);
    await Promise.all([hs1?.stop(), hs2?.stop()]);
  });

  it('a handoff crosses to the other server, is pushed once and ACKed; the receipts come back; a reply crosses back', async () => {
    const sent = await alice.ok('send_handoff', { to: 'bob', body: 'Review the release notes, other org' });
    assert.equal(sent.recipients[0].identity, 'bob@nodeB');
    assert.equal(sent.relay.state, 'on_homeserver', JSON.stringify(sent.relay));
    const id = sent.message_id;
    await bob.waitForPushes(1, 30_000);
    assert.equal(bob.pushes[0].meta.message_id, id);
    await waitUntil(
      async () => (await alice.ok('get_receipts', { message_id: id })).deliveries[0].state === 'pushed',
      30_000,
      "hub B's push, reported back across the federation",
    );
    await bob.ok('ack', { message_id: id });
    await bob.ok('report_result', { message_id: id, outcome: 'done', summary: 'Two typos fixed' });
    let delivery: any;
    await waitUntil(
      async () => {
        delivery = (await alice.ok('get_receipts', { message_id: id })).deliveries[0];
        return delivery.state === 'done';
      },
      30_000,
      () => `bob's ACK and result at alice: ${JSON.stringify(delivery)}`,
    );
    assert.deepEqual(
      delivery.receipts.map((r: any) => [r.kind, r.by, r.node]),
      [
        ['ack', 'bob@nodeB', 'nodeB'],
        ['result', 'bob@nodeB', 'nodeB'],
      ],
    );

    const reply = await bob.ok('send_handoff', { to: 'alice', body: 'Done: notes reviewed', reply_to: id });
    await waitFor(() => alice.pushes.some((p) => p.meta.message_id === reply.message_id), 30_000, 'the reply at alice');
    // Pushed once: a later handoff arrives after it (hub A pushes in the room's order).
    const later = await alice.ok('send_handoff', { to: 'bob', body: 'and one more' });
    await waitFor(() => bob.pushes.some((p) => p.meta.message_id === later.message_id), 30_000, 'a later handoff');
    assert.equal(bob.pushes.filter((p) => p.meta.message_id === id).length, 1);
    assert.equal(alice.pushes.filter((p) => p.meta.message_id === reply.message_id).length, 1);
  });

  it('a person on each server answers from a plain client: ✅ and "done" cross to the other org\'s sender, a reply reaches its agent', async () => {
    let n = 0;
    const say = (hs: Synapse, who: MatrixUser, type: string, content: unknown) =>
      api(
        hs,
        who.accessToken,
        'PUT',
        `/rooms/${encodeURIComponent(roomId)}/send/${type}/p-${unique()}-${n++}`,
        content,
      );
    /** The room as the person's own server shows it to them. */
    const seen = async (hs: Synapse, who: MatrixUser, eventId: string) =>
      (
        (await api(hs, who.accessToken, 'GET', `/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=100`))
          .chunk as any[]
      ).find((e) => e.event_id === eventId);

    // alice (hub A, first server) hands off to carol, a person on the second server.
    const toCarol = await alice.ok('send_handoff', {
      to: personIdentity(carol.userId)!,
      body: 'Approve the release, other org',
    });
    await waitUntil(
      async () => !!(await seen(hs2, carol, toCarol.relay.event_id)),
      30_000,
      "the handoff in carol's own server",
    );
    const shown = await seen(hs2, carol, toCarol.relay.event_id);
    assert.deepEqual(shown.content['m.mentions'], { user_ids: [carol.userId] }, 'carol is mentioned');
    await say(hs2, carol, 'm.reaction', {
      'm.relates_to': { rel_type: 'm.annotation', event_id: toCarol.relay.event_id, key: '✅' },
    });
    await say(hs2, carol, 'm.room.message', {
      msgtype: 'm.text',
      body: 'done: approved across the federation',
      'm.relates_to': { 'm.in_reply_to': { event_id: toCarol.relay.event_id } },
    });
    let d: any;
    await waitUntil(
      async () => {
        d = (await alice.ok('get_receipts', { message_id: toCarol.message_id })).deliveries[0];
        return d.state === 'done';
      },
      30_000,
      () => `carol's ✅ and "done" at alice: ${JSON.stringify(d)}`,
    );
    assert.deepEqual(
      d.receipts.map((r: any) => [r.kind, r.by, r.outcome, r.summary && plainBody({ body: r.summary })]),
      [
        ['ack', personIdentity(carol.userId), undefined, undefined],
        ['result', personIdentity(carol.userId), 'done', 'approved across the federation'],
      ],
    );

    // bob (hub B, second server) hands off to dan, a person on the first; dan's reply reaches bob once.
    const toDan = await bob.ok('send_handoff', { to: personIdentity(dan.userId)!, body: 'Which branch ships?' });
    await waitUntil(
      async () => !!(await seen(hs1, dan, toDan.relay.event_id)),
      30_000,
      "the handoff in dan's own server",
    );
    await say(hs1, dan, 'm.room.message', {
      msgtype: 'm.text',
      body: 'release/2.0, from dan',
      'm.relates_to': { 'm.in_reply_to': { event_id: toDan.relay.event_id } },
    });
    const fromDan = () => bob.pushes.filter((p) => p.meta.from === personIdentity(dan.userId));
    await waitFor(() => fromDan().length >= 1, 30_000, "dan's reply at bob");
    const answer = await bob.ok('get_message', { message_id: fromDan()[0].meta.message_id });
    assert.equal(answer.reply_to, toDan.message_id);
    assert.match(answer.body, /release\/2\.0, from dan/);
    await bob.ok('ack', { message_id: fromDan()[0].meta.message_id });
    // Once: a later handoff comes after it, and the reply was not pushed again.
    const later = await alice.ok('send_handoff', { to: 'bob', body: 'after dan' });
    await waitFor(() => bob.pushes.some((p) => p.meta.message_id === later.message_id), 30_000, 'a later handoff');
    await bob.ok('ack', { message_id: later.message_id });
    assert.equal(fromDan().length, 1, "dan's reply pushed once");
  });

  it("a stream through an outage of the recipient's homeserver and kill -9 of both hubs: 0 lost, 0 twice", async () => {
    const N = 40;
    stops.push(autoAck(bob));
    const ids: string[] = [];
    const replies: { i: number; relay: string }[] = [];
    let i = 0;
    const send = async () => {
      const r = await alice.ok('send_handoff', { to: 'bob', body: `federated stream #${i}` });
      ids.push(r.message_id);
      replies.push({ i, relay: r.relay.state });
      i++;
    };
    while (i < N / 4) await send();
    // The recipient's homeserver goes away: hub A's server takes the events, federation queues them.
    await hs2.stop();
    while (i < N / 2) await send();
    // Hub B dies while its homeserver is down, and comes back before it.
    [hubB, bob] = await crashAndReturn(hubB, bob, 'bob-1', hubs, agents);
    stops.push(autoAck(bob));
    while (i < (5 * N) / 8) await send();
    // The sender's hub dies too, with handoffs the other server has not taken yet.
    [hubA, alice] = await crashAndReturn(hubA, alice, 'alice-1', hubs, agents);
    await waitMatrix(hubA, 'connected', 30_000);
    while (i < (3 * N) / 4) await send();
    await hs2.restart();
    await waitMatrix(hubB, 'connected', 60_000);
    while (i < N) await send();

    const bobs = agents.filter((x) => x.name === 'bob');
    const want = new Set(ids);
    const reached = () =>
      new Set(bobs.flatMap((x) => x.pushes.map((p) => p.meta.message_id)).filter((id) => want.has(id))).size;
    await waitFor(() => reached() === N, 120_000).catch(() => undefined); // the counts below say what is missing
    const { pending, twice, lost, acked } = await settle(ids, laterHandoff('after the stream'));
    console.log(
      `# federated stream: ${N} sent, ${N} acknowledged (stored), lost ${lost.length}, pushed twice ${twice.length}, ` +
        `ACKs back at the sender ${acked}/${N}; replies: ${replies.filter((r) => r.relay === 'on_homeserver').length} on_homeserver, ` +
        `${replies.filter((r) => r.relay === 'in_outbox').length} in_outbox`,
    );
    assert.deepEqual(lost, [], 'lost');
    assert.deepEqual(twice, [], 'pushed twice');
    assert.equal(pending.length, N, 'every handoff in the sender ledger');
    assert.equal(acked, N, 'every ACK back at the sender');
    // Hub A's own homeserver stayed up: every send reached it, whatever the other server did.
    assert.deepEqual(
      replies.filter((r) => r.relay !== 'on_homeserver'),
      [],
      'each reply says on_homeserver',
    );
  });
  it("the federation link cut for a minute, both hubs kill -9'd during it: the sender says relayed, then 0 lost, 0 twice", async () => {
    const N = 24;
    const gates = [hs1.federationLink!, hs2.federationLink!];
    const ids: string[] = [];
    const send = async (i: number) => {
      const r = await alice.ok('send_handoff', { to: 'bob', body: `across a cut link #${i}` });
      ids.push(r.message_id);
      // Hub A's own homeserver is up: each send is on it at once, whatever federation does.
      assert.equal(r.relay.state, 'on_homeserver', `#${i}: ${JSON.stringify(r.relay)}`);
    };
    const cutAt = Date.now();
    await Promise.all(gates.map((g) => g.cut()));
    for (let i = 0; i < N / 2; i++) await send(i);
    // Both hubs die during the cut and come back; neither server can reach the other meanwhile.
    [hubA, alice] = await crashAndReturn(hubA, alice, 'alice-1', hubs, agents);
    [hubB, bob] = await crashAndReturn(hubB, bob, 'bob-1', hubs, agents);
    stops.push(autoAck(bob));
    await waitMatrix(hubA, 'connected', 30_000);
    for (let i = N / 2; i < N; i++) await send(i);
    const want = new Set(ids);
    const bobs = agents.filter((x) => x.name === 'bob');
    const reached = () => bobs.some((x) => x.pushes.some((p) => want.has(p.meta.message_id)));
    // The sender's view while the link is down: on its homeserver, nothing from the other node.
    const during = await Promise.all(
      ids.map(async (id) => (await alice.ok('get_receipts', { message_id: id })).deliveries[0]),
    );
    assert.deepEqual(
      during.filter((d: any) => d.state !== 'relayed'),
      [],
      'every handoff relayed (on the homeserver), none delivered or ACKed while the link is cut',
    );
    assert.equal(reached(), false, 'nothing reached bob while the link is cut');
    // A minute without federation, then the link is back.
    await new Promise((r) => setTimeout(r, Math.max(0, 60_000 - (Date.now() - cutAt)))); // sleep: the outage lasts a minute
    assert.equal(reached(), false, 'nothing reached bob in the whole minute');
    await Promise.all(gates.map((g) => g.restore()));
    const restoredAt = Date.now();

    const { twice, lost, acked } = await settle(ids, laterHandoff('after the link came back'));
    const drained = Date.now() - restoredAt;
    console.log(
      `# federation link cut 60 s, both hubs kill -9'd during it: ${N} sent, ${N} on the sender's homeserver, ` +
        `lost ${lost.length}, pushed twice ${twice.length}, ACKs back at the sender ${acked}/${N} ` +
        `${(drained / 1000).toFixed(1)} s after the link came back`,
    );
    assert.deepEqual(lost, [], 'lost');
    assert.deepEqual(twice, [], 'pushed twice');
    assert.equal(acked, N, 'every ACK back at the sender');
  });
});

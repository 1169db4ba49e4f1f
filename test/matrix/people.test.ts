// People answer from a plain Matrix client (raw client-server API, as Element would call it):
// a reply and a thread reply to a handoff reach its sender's agent exactly once per session as
// handoffs it can ACK; a person ACKs a handoff addressed to them with ✅ and finishes it with a
// short reply; what means nothing is dropped with a logged reason.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { personIdentity } from '../../extension/hub/matrix/person';
import { connectAgent, plainBody, type Agent } from '../helpers/agent';
import type { HubProcess } from '../helpers/hubProcess';
import {
  api,
  countPushes,
  matrixHub,
  matrixSuite,
  snapshot,
  stopAll,
  synapse,
  unique,
  user,
  waitFor,
  waitPeer,
  waitUntil,
  type MatrixUser,
  type Synapse,
} from './world';

matrixSuite('Matrix: people answer from a plain client', () => {
  let hs: Synapse;
  let a: MatrixUser;
  let b: MatrixUser;
  let carol: MatrixUser;
  let person: string;
  let hubA: HubProcess;
  let hubB: HubProcess;
  let alice: Agent;
  let alice2: Agent;
  let bob: Agent;
  let roomId: string;
  const agents: Agent[] = [];
  const hubs: HubProcess[] = [];
  let n = 0;
  const say = (type: string, content: unknown) =>
    api(
      hs,
      carol.accessToken,
      'PUT',
      `/rooms/${encodeURIComponent(roomId)}/send/${type}/c-${unique()}-${n++}`,
      content,
    );
  const roomEvents = async () =>
    (await api(hs, a.accessToken, 'GET', `/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=100`))
      .chunk as any[];

  before(async () => {
    hs = await synapse();
    const tag = unique();
    a = await user(hs, `a-${tag}`);
    b = await user(hs, `b-${tag}`);
    carol = await user(hs, `carol-${tag}`);
    person = personIdentity(carol.userId)!;
    const room = `#people-${tag}:${hs.serverName}`;
    hubA = await matrixHub(hs, {
      node: 'nodeA',
      user: a,
      room,
      allowed: [b.userId, carol.userId],
      people: [carol.userId],
    });
    hubB = await matrixHub(hs, { node: 'nodeB', user: b, room, allowed: [a.userId, carol.userId] });
    hubs.push(hubA, hubB);
    roomId = (await snapshot(hubA)).link!.room!;
    await api(hs, carol.accessToken, 'POST', `/join/${encodeURIComponent(roomId)}`, {});
    alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
    alice2 = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-2' });
    bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
    agents.push(alice, alice2, bob);
    await waitPeer(alice, 'bob@nodeB');
  });
  after(async () => {
    await stopAll(agents, hubs, hs);
  });

  it("a reply and a thread reply reach the sender's agent once per session, as handoffs it ACKs", async () => {
    const sent = await alice.ok('send_handoff', { to: 'bob', body: 'Refactor the parser', thread: 'parser' });
    const E = sent.relay.event_id;
    const reply = await say('m.room.message', {
      msgtype: 'm.text',
      body: `> <${a.userId}> Handoff from alice@nodeA to bob@nodeB\n\nWhich parser, the old one?`,
      'm.relates_to': { 'm.in_reply_to': { event_id: E } },
    });
    const threaded = await say('m.room.message', {
      msgtype: 'm.text',
      body: 'In the thread: use the new one',
      'm.relates_to': { rel_type: 'm.thread', event_id: E, is_falling_back: true, 'm.in_reply_to': { event_id: E } },
    });
    const fromCarol = (x: Agent) => x.pushes.filter((p) => p.meta.from === person);
    await waitFor(
      () => fromCarol(alice).length >= 2 && fromCarol(alice2).length >= 2,
      15_000,
      "carol's two answers at both of alice's sessions",
    );
    // A duplicate, or an answer pushed to bob, would come before a later handoff: each hub pushes
    // what it reads in the room's order.
    const toAlice = await bob.ok('send_handoff', { to: 'alice', body: 'a later handoff' });
    const toBob = await alice.ok('send_handoff', { to: 'bob', body: 'a later handoff' });
    await waitFor(
      () =>
        [alice, alice2].every((s) => s.pushes.some((p) => p.meta.message_id === toAlice.message_id)) &&
        bob.pushes.some((p) => p.meta.message_id === toBob.message_id),
      15_000,
      "later handoffs at alice's two sessions and at bob's",
    );
    await alice.ok('ack', { message_id: toAlice.message_id });
    await bob.ok('ack', { message_id: toBob.message_id });
    const ids = new Set(fromCarol(alice).map((p) => p.meta.message_id));
    assert.equal(ids.size, 2);
    for (const s of [alice, alice2]) {
      const { unflagged, flagged } = countPushes([s], ids);
      assert.deepEqual([...unflagged.values()], [1, 1], `${s.name} (${s === alice ? 1 : 2}): each answer once`);
      assert.equal(flagged, 0);
    }
    assert.equal(
      bob.pushes.filter((p) => p.meta.from === person).length,
      0,
      "an answer goes to the handoff's sender only",
    );
    const [first, second] = fromCarol(alice);
    assert.equal(first.meta.thread, 'parser');
    const m1 = await alice.ok('get_message', { message_id: first.meta.message_id });
    assert.equal(m1.reply_to, sent.message_id);
    assert.equal(m1.from, person);
    assert.match(m1.body, /Which parser, the old one\?/);
    assert.doesNotMatch(m1.body, /Handoff from alice/, 'the quoted fallback is not part of the answer');
    assert.match((await alice.ok('get_message', { message_id: second.meta.message_id })).body, /use the new one/);

    for (const p of [first, second])
      assert.equal((await alice.ok('ack', { message_id: p.meta.message_id })).recorded, true);
    // The person sees the ACKs in the room, related to their messages.
    await waitUntil(
      async () => {
        const events = await roomEvents();
        return [reply.event_id, threaded.event_id].every((e) =>
          events.some((x) => x.content?.['m.relates_to']?.event_id === e && /alice@nodeA ACKed/.test(x.content.body)),
        );
      },
      15_000,
      'the ACKs in the room',
    );
    await bob.ok('ack', { message_id: sent.message_id });
  });

  it('a person ACKs with ✅ and finishes with "done: …"; the sender\'s ledger shows both', async () => {
    const sent = await alice.ok('send_handoff', { to: person, body: 'Please approve the release notes' });
    assert.equal(sent.recipients[0].state, 'relayed');
    const handoff = (await roomEvents()).find((e) => e.event_id === sent.relay.event_id);
    assert.deepEqual(handoff.content['m.mentions'], { user_ids: [carol.userId] }, 'the person is mentioned');
    assert.match(handoff.content.body, /react ✅ to ACK/);

    await say('m.reaction', { 'm.relates_to': { rel_type: 'm.annotation', event_id: sent.relay.event_id, key: '✅' } });
    let entry: any;
    await waitUntil(
      async () => {
        entry = (await alice.ok('pending')).pending.find((e: any) => e.id === sent.message_id);
        return entry?.recipients[0].state === 'acked';
      },
      15_000,
      "carol's ACK in alice's ledger",
    );
    const d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
    assert.equal(d.receipts[0].kind, 'ack');
    assert.equal(d.receipts[0].by, person);
    assert.equal(d.receipts[0].node, person.slice(person.indexOf('@') + 1));

    await say('m.room.message', {
      msgtype: 'm.text',
      body: 'done: approved, ship it',
      'm.relates_to': { 'm.in_reply_to': { event_id: sent.relay.event_id } },
    });
    let done: any;
    await waitUntil(
      async () => {
        done = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
        return done.state === 'done';
      },
      15_000,
      "carol's result",
    );
    assert.deepEqual(
      done.receipts.map((r: any) => [r.kind, r.outcome, r.summary && plainBody({ body: r.summary })]),
      [
        ['ack', undefined, undefined],
        ['result', 'done', 'approved, ship it'],
      ],
    );
    assert.equal(
      alice.pushes.filter((p) => p.meta.from === person && /approved/.test(p.content)).length,
      0,
      'a finishing reply is a receipt, not a new handoff',
    );
  });

  it('what means nothing is dropped with a logged reason', async () => {
    const sent = await alice.ok('send_handoff', { to: 'bob', body: 'for bob only' });
    await say('m.reaction', { 'm.relates_to': { rel_type: 'm.annotation', event_id: sent.relay.event_id, key: '✅' } });
    await say('m.reaction', { 'm.relates_to': { rel_type: 'm.annotation', event_id: sent.relay.event_id, key: '🎉' } });
    await say('m.room.message', { msgtype: 'm.text', body: 'morning all' });
    const esc = carol.userId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    await waitUntil(() => /morning|no reply to a handoff/.test(hubA.log()), 15_000, 'the plain message logged');
    const log = hubA.log();
    assert.match(
      log,
      new RegExp(
        `dropped m\\.reaction \\S+ from ${esc} \\(not_a_recipient\\): ${person.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a recipient of ${sent.message_id}`,
      ),
    );
    assert.match(
      log,
      new RegExp(`dropped m\\.reaction \\S+ from ${esc} \\(meaningless\\): the reaction "🎉" means nothing here`),
    );
    assert.match(
      log,
      new RegExp(
        `dropped m\\.room\\.message \\S+ from ${esc} \\(meaningless\\): a message that is no reply to a handoff`,
      ),
    );
    const d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
    assert.ok(!d.receipts.some((r: any) => r.by === person), 'no receipt by a non-recipient');
    await bob.ok('ack', { message_id: sent.message_id });
  });
});

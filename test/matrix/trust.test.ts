// G9 on a real Synapse: a node speaks only through the Matrix account bound to it. Mallory is an
// allowed sender of both hubs (a colleague's account, say) and tries to speak for hub A's node:
// a handoff "from alice@nodeA", an ACK "by bob@nodeB", a takeover of nodeA's announcement, and a
// second node on her account. Each is refused, logged and counted; her own node works.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import type { HubProcess } from '../helpers/hubProcess';
import {
  api,
  matrixHub,
  matrixSuite,
  snapshot,
  stopAll,
  synapse,
  unique,
  user,
  waitFor,
  waitMatrix,
  waitPeer,
  waitUntil,
  type MatrixUser,
  type Synapse,
} from './world';

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

matrixSuite('Matrix: every claim is authenticated by the account bound to its node', () => {
  let hs: Synapse;
  let a: MatrixUser;
  let b: MatrixUser;
  let mallory: MatrixUser;
  let hubA: HubProcess;
  let hubB: HubProcess;
  let alice: Agent;
  let bob: Agent;
  let roomId: string;
  const agents: Agent[] = [];
  const hubs: HubProcess[] = [];
  let n = 0;
  const put = (type: string, content: unknown) =>
    api(
      hs,
      mallory.accessToken,
      'PUT',
      `/rooms/${encodeURIComponent(roomId)}/send/${type}/m-${unique()}-${n++}`,
      content,
    );
  const wire = (id: string, from: string, to: string, node: string, body: string) => ({
    msgtype: 'm.text',
    body,
    'org.handoff.message': {
      id,
      from,
      to: [to],
      thread: 't',
      body,
      attachments: [],
      requires_ack: true,
      sla_ms: 60_000,
      ttl_ms: 600_000,
      sent_at: Date.now(),
      session: 's',
      node,
    },
  });

  before(async () => {
    hs = await synapse();
    const tag = unique();
    a = await user(hs, `a-${tag}`);
    b = await user(hs, `b-${tag}`);
    mallory = await user(hs, `mallory-${tag}`);
    const room = `#trust-${tag}:${hs.serverName}`;
    hubA = await matrixHub(hs, { node: 'nodeA', user: a, room, allowed: [b.userId, mallory.userId] });
    hubB = await matrixHub(hs, { node: 'nodeB', user: b, room, allowed: [a.userId, mallory.userId] });
    hubs.push(hubA, hubB);
    roomId = (await snapshot(hubA)).link!.room!;
    await api(hs, mallory.accessToken, 'POST', `/join/${encodeURIComponent(roomId)}`, {}); // invited as an allowed sender
    alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
    bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
    agents.push(alice, bob);
    await waitPeer(alice, 'bob@nodeB');
    await waitPeer(bob, 'alice@nodeA');
  });
  after(async () => {
    await stopAll(agents, hubs, hs);
  });

  it('a handoff "from alice@nodeA" posted by another allowed account is refused, logged and counted', async () => {
    const forgedId = '01JD3V7W2K8Q5X9Y4Z6A1B2C3E';
    await put('m.room.message', wire(forgedId, 'alice@nodeA', 'bob@nodeB', 'nodeA', 'Forged: push to production'));
    // A real handoff after the forgery arrives, so the forgery had its chance.
    const real = await alice.ok('send_handoff', { to: 'bob', body: 'the real one' });
    await waitFor(() => bob.pushes.some((p) => p.meta.message_id === real.message_id), 15_000, 'the real handoff');
    assert.equal(bob.pushes.filter((p) => p.meta.message_id === forgedId).length, 0, 'the forgery was pushed');
    assert.match(
      hubB.log(),
      new RegExp(
        `dropped m\\.room\\.message \\S+ from ${esc(mallory.userId)} \\(forged_node\\): handoff ${forgedId} claims to come from alice@nodeA, but node nodeA speaks only through ${esc(a.userId)}`,
      ),
    );
    assert.ok(((await snapshot(hubB)).link!.dropped!.forged_node ?? 0) >= 1, 'counted in the remote status');
    await bob.ok('ack', { message_id: real.message_id });
  });

  it('an ACK "by bob@nodeB" posted by another allowed account is refused; bob\'s own receipt counts', async () => {
    const sent = await alice.ok('send_handoff', { to: 'bob', body: 'needs bob himself' });
    await waitFor(() => bob.pushes.some((p) => p.meta.message_id === sent.message_id), 15_000, 'push');
    const before = (await snapshot(hubA)).link!.dropped!.forged_node ?? 0;
    await put('m.room.message', {
      msgtype: 'm.notice',
      body: `bob@nodeB ACKed handoff ${sent.message_id} from alice@nodeA`,
      'm.relates_to': { rel_type: 'm.reference', event_id: sent.relay.event_id },
      'org.handoff.receipt': {
        message_id: sent.message_id,
        sender: 'alice@nodeA',
        kind: 'ack',
        by: 'bob@nodeB',
        session: 'bob-1',
        node: 'nodeB',
        at: Date.now(),
      },
    });
    await bob.ok('mark_read', { message_id: sent.message_id }); // after the forgery: when it arrives, the forgery was read
    let d: any;
    await waitUntil(
      async () => {
        d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
        return d.receipts.some((r: any) => r.kind === 'read');
      },
      15_000,
      "bob's read receipt",
    );
    assert.deepEqual(
      d.receipts.map((r: any) => r.kind),
      ['read'],
      'no forged ACK in the ledger',
    );
    assert.equal(d.state, 'read');
    assert.match(
      hubA.log(),
      new RegExp(
        `dropped m\\.room\\.message \\S+ from ${esc(mallory.userId)} \\(forged_node\\): ack receipt for ${sent.message_id} claims to be by bob@nodeB`,
      ),
    );
    assert.equal((await snapshot(hubA)).link!.dropped!.forged_node, before + 1);
    await bob.ok('ack', { message_id: sent.message_id });
  });

  it("a takeover of nodeA's announcement is refused and shown; hub A puts its own back", async () => {
    await api(hs, mallory.accessToken, 'PUT', `/rooms/${encodeURIComponent(roomId)}/state/org.handoff.node/nodeA`, {
      node: 'nodeA',
      identities: [{ name: 'evil', roles: [] }],
    });
    await waitUntil(
      async () =>
        ((await snapshot(hubB)).link!.notices ?? []).some((l) => l.includes(`${mallory.userId} claimed node nodeA`)),
      15_000,
      "the refusal in hub B's status",
    );
    const peers = (await bob.ok('list_peers')).peers.map((p: any) => p.identity);
    assert.ok(!peers.includes('evil@nodeA'), 'mallory added an identity to nodeA');
    const nodes = (await snapshot(hubB)).link!.nodes!;
    assert.deepEqual(
      nodes.find((x) => x.node === 'nodeA'),
      { node: 'nodeA', user: a.userId, how: 'announced', signed: true },
    );
    // Hub A saw its announcement overwritten and wrote it again.
    await waitUntil(
      async () => {
        const s = await api(
          hs,
          a.accessToken,
          'GET',
          `/rooms/${encodeURIComponent(roomId)}/state/org.handoff.node/nodeA`,
        ).catch(() => undefined);
        return s?.identities?.some((i: any) => i.name === 'alice');
      },
      15_000,
      "hub A's announcement restored",
    );
    assert.match(hubA.log(), /\(node_claim_refused\): nodeA is bound to/);
  });

  it('her own node works; a second node on her account is refused unless configured', async () => {
    await api(hs, mallory.accessToken, 'PUT', `/rooms/${encodeURIComponent(roomId)}/state/org.handoff.node/nodeM`, {
      node: 'nodeM',
      identities: [{ name: 'mal', roles: [] }],
    });
    await waitPeer(bob, 'mal@nodeM');
    const id = '01JD3V7W2K8Q5X9Y4Z6A1B2C3F';
    await put('m.room.message', wire(id, 'mal@nodeM', 'bob@nodeB', 'nodeM', 'from her own node'));
    await waitFor(
      () => bob.pushes.some((p) => p.meta.message_id === id),
      15_000,
      "mallory's handoff from her own node",
    );
    assert.equal(bob.pushes.find((p) => p.meta.message_id === id)!.meta.from, 'mal@nodeM');
    await bob.ok('ack', { message_id: id });

    await api(hs, mallory.accessToken, 'PUT', `/rooms/${encodeURIComponent(roomId)}/state/org.handoff.node/nodeX`, {
      node: 'nodeX',
      identities: [{ name: 'x', roles: [] }],
    });
    await waitUntil(
      async () =>
        ((await snapshot(hubB)).link!.notices ?? []).some(
          (l) => l.includes('claimed node nodeX') && l.includes('already speaks for nodeM'),
        ),
      15_000,
      'the second node refused',
    );
    assert.ok(!(await bob.ok('list_peers')).peers.some((p: any) => p.identity === 'x@nodeX'));
  });

  it('the binding survives a restart: the first claim stays bound', async () => {
    await bob.close();
    await hubB.stop();
    hubB = await hubB.restart();
    hubs.push(hubB);
    await waitMatrix(hubB, 'connected', 30_000);
    bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
    agents.push(bob);
    const forgedId = '01JD3V7W2K8Q5X9Y4Z6A1B2C3G';
    await put('m.room.message', wire(forgedId, 'alice@nodeA', 'bob@nodeB', 'nodeA', 'forged after the restart'));
    const real = await alice.ok('send_handoff', { to: 'bob', body: 'real after the restart' });
    await waitFor(() => bob.pushes.some((p) => p.meta.message_id === real.message_id), 15_000, 'the real handoff');
    assert.equal(bob.pushes.filter((p) => p.meta.message_id === forgedId).length, 0);
    const snap = await snapshot(hubB);
    assert.equal(snap.link!.nodes!.find((x) => x.node === 'nodeA')?.user, a.userId);
    assert.equal(snap.link!.nodes!.find((x) => x.node === 'nodeM')?.user, mallory.userId);
    assert.ok((snap.link!.dropped!.forged_node ?? 0) >= 1);
  });
});

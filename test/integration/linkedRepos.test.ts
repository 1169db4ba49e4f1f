// Two repositories on one machine, linked by the user on both sides: real hubs, real bridges, real
// MCP SDK clients. A handoff to `bob@frontend` is stored here before `stored`, taken once by the
// other hub, pushed once there, and its receipts come back written by the recipient.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { waitUntil } from '../helpers/wait';
import type { HubProcess } from '../helpers/hubProcess';
import { handoff, linksOf, linkState, repoHub, snapshotOf } from '../helpers/linkedHubs';

describe('two repositories on one machine, linked', () => {
  let backend: HubProcess;
  let frontend: HubProcess;
  let alice: Agent;
  let bob: Agent;

  before(async () => {
    // A fast timer: the SLA chase below falls due within a second.
    const env = { HANDOFF_TICK_MS: '100' };
    [backend, frontend] = await Promise.all([repoHub('backend', env), repoHub('frontend', env)]);
  });
  after(async () => {
    await alice?.close().catch(() => undefined);
    await bob?.close().catch(() => undefined);
    await Promise.all([backend?.stop(), frontend?.stop()]);
  });

  it('nothing flows until both sides have linked', async () => {
    const said = await handoff(backend, 'link', frontend.workspace);
    assert.match(said, /this repository is backend/);
    const one = await linkState(backend, frontend.workspace, 'waiting');
    assert.match(one.links[0].error ?? '', /is not linked to/);
    // The other side refuses it, and knows nothing of backend's agents.
    assert.deepEqual((await linksOf(frontend)).links, []);
    await handoff(frontend, 'link', backend.workspace);
    const a = await linkState(backend, frontend.workspace, 'linked');
    const b = await linkState(frontend, backend.workspace, 'linked');
    assert.equal(a.links[0].name, 'frontend');
    assert.equal(b.links[0].name, 'backend');
    // Each recorded the other hub's node key at the agreement.
    assert.ok(a.links[0].key && b.links[0].key && a.links[0].key !== b.links[0].key);
    const status = await handoff(backend, 'status');
    assert.match(status, /link frontend .*: linked/);
  });

  it('name@repo reaches the other repository: stored, taken once, pushed once, receipts by the recipient', async () => {
    alice = await connectAgent({ socket: backend.socket, name: 'alice', session: 'alice-1' });
    bob = await connectAgent({ socket: frontend.socket, name: 'bob', session: 'bob-1' });
    // backend learns frontend's agents, with their liveness, for list_peers.
    const peers = await waitUntil(
      async () => {
        const p = (await alice.ok('list_peers')).peers as {
          identity: string;
          live_sessions: number;
          repository?: string;
        }[];
        return p.find((x) => x.identity === 'bob@frontend' && x.live_sessions === 1) ? p : undefined;
      },
      20_000,
      'bob@frontend live in list_peers',
    );
    assert.equal(peers.find((x) => x.identity === 'bob@frontend')?.repository, 'frontend');
    const me = await alice.ok('whoami');
    assert.equal(me.repository, 'backend');
    assert.equal(me.address_from_linked_repositories, 'alice@backend');

    // A name without @ is always this repository's.
    const bare = await alice.call('send_handoff', { to: 'bob', body: 'to which bob?' });
    assert.equal(bare.isError, true);
    assert.match((bare.content as { text: string }[])[0].text, /No identity "bob"/);

    const sent = await alice.ok('send_handoff', { to: 'bob@frontend', body: 'add the login form' });
    // Held by frontend's hub within the send's wait (3 s), else honestly still in the outbox.
    assert.ok(['in_their_hub', 'in_outbox'].includes(sent.relay.state), sent.relay.state);
    assert.equal(sent.recipients[0].state, sent.relay.state === 'in_their_hub' ? 'relayed' : 'in_outbox');
    assert.notEqual(sent.state, 'pushed'); // nothing here was pushed to
    await bob.waitForPushes(1);
    assert.equal(bob.pushes[0].meta.message_id, sent.message_id);
    assert.match(bob.pushes[0].content, /add the login form/);
    assert.equal(bob.pushes[0].meta.from, 'alice@backend');

    // The sender's ledger hears the push from the recipient's hub.
    await waitUntil(
      async () => {
        const r = await alice.ok('get_receipts', { message_id: sent.message_id });
        return r.deliveries[0].pushes.length === 1 && r.deliveries[0].pushes[0].node === 'frontend';
      },
      20_000,
      'the push reported back',
    );

    await bob.ok('ack', { message_id: sent.message_id });
    await bob.ok('report_result', { message_id: sent.message_id, outcome: 'done', summary: 'form added' });
    const receipts = await waitUntil(
      async () => {
        const r = await alice.ok('get_receipts', { message_id: sent.message_id });
        return r.deliveries[0].receipts.length >= 2 ? r : undefined;
      },
      20_000,
      'the ACK and the result carried back',
    );
    const kinds = receipts.deliveries[0].receipts.map(
      (r: { kind: string; by: string; node: string; channel: string }) => [r.kind, r.by, r.node, r.channel],
    );
    assert.deepEqual(kinds, [
      ['ack', 'bob@frontend', 'frontend', 'remote'],
      ['result', 'bob@frontend', 'frontend', 'remote'],
    ]);
    assert.equal(receipts.deliveries[0].state, 'done');
    // Pushed once per session there: one push, however the link ran.
    assert.equal(bob.pushes.filter((p) => p.meta.message_id === sent.message_id).length, 1);
    const s = await snapshotOf(backend);
    assert.equal(s.links?.links[0].outbox, 0);
  });

  it("the SLA is chased in the recipient's repository, and the sender's ledger says it was chased", async () => {
    const sent = await alice.ok('send_handoff', { to: 'bob@frontend', body: 'answer within a second', sla_seconds: 1 });
    await waitUntil(
      () => bob.pushes.some((p) => p.meta.message_id === sent.message_id && p.meta.chase === 'true'),
      20_000,
      'the chase pushed to bob in frontend',
    );
    assert.equal(bob.pushes.filter((p) => p.meta.message_id === sent.message_id && p.meta.chase !== 'true').length, 1);
    await bob.ok('ack', { message_id: sent.message_id });
    await waitUntil(
      async () => {
        const r = await alice.ok('get_receipts', { message_id: sent.message_id });
        return r.deliveries[0].state === 'acked';
      },
      20_000,
      'the ACK back in backend',
    );
  });

  it('the answer is back the other way: bob replies to alice@backend', async () => {
    const sent = await bob.ok('send_handoff', { to: 'alice@backend', body: 'which endpoint?' });
    assert.ok(['in_their_hub', 'in_outbox'].includes(sent.relay.state), sent.relay.state);
    await alice.waitForPushes(1);
    assert.equal(alice.pushes[0].meta.message_id, sent.message_id);
    assert.equal(alice.pushes[0].meta.from, 'bob@frontend');
  });

  it('queued while the other hub is not running, delivered once when it starts', async () => {
    await bob.close();
    await frontend.stop();
    await linkState(backend, frontend.workspace, 'down');
    const sent = await alice.ok('send_handoff', { to: 'bob@frontend', body: 'while you were away' });
    assert.equal(sent.state, 'queued');
    assert.equal(sent.recipients[0].state, 'in_outbox');
    assert.equal(sent.relay.state, 'in_outbox');
    assert.equal(sent.relay.repository, 'frontend');
    assert.equal((await linksOf(backend)).links[0].outbox, 1);
    const r = await alice.ok('get_receipts', { message_id: sent.message_id });
    assert.equal(r.deliveries[0].state, 'queued'); // never pushed for what is only in an outbox
    frontend = await frontend.restart();
    bob = await connectAgent({ socket: frontend.socket, name: 'bob', session: 'bob-2' });
    await waitUntil(() => bob.pushes.some((p) => p.meta.message_id === sent.message_id), 30_000, 'the queued handoff');
    await waitUntil(async () => (await linksOf(backend)).links[0].outbox === 0, 20_000, 'the outbox drained');
    const inbox = await bob.ok('inbox', { limit: 200 });
    assert.equal(inbox.messages.filter((m: { message_id: string }) => m.message_id === sent.message_id).length, 1);
  });

  it('unlinking stops it: refused at the hello, and what waits stays in the outbox', async () => {
    await handoff(frontend, 'unlink', backend.workspace);
    await linkState(frontend, backend.workspace, 'unlinked');
    await linkState(backend, frontend.workspace, 'waiting');
    const sent = await alice.ok('send_handoff', { to: 'bob@frontend', body: 'after the unlink' });
    assert.equal(sent.relay.state, 'in_outbox');
    assert.equal((await linksOf(backend)).links[0].outbox, 1);
    assert.equal(
      bob.pushes.some((p) => p.meta.message_id === sent.message_id),
      false,
    );
    // Linked again: delivered, once.
    await handoff(frontend, 'link', backend.workspace);
    await waitUntil(
      () => bob.pushes.some((p) => p.meta.message_id === sent.message_id),
      30_000,
      'the handoff after relinking',
    );
    assert.equal(bob.pushes.filter((p) => p.meta.message_id === sent.message_id).length, 1);
  });
});

// Two real agents (SDK Client → real bridge → real hub) hand work to each other.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sessionLabel } from '../../extension/hub/presence/sessions';
import { connectAgent, plainBody, waitFor, type Agent } from '../helpers/agent';
import { waitUntil } from '../helpers/wait';
import { startHub, type HubProcess } from '../helpers/hubProcess';

describe('handoff between two agents over the real bridge', () => {
  let hub: HubProcess;
  let alice: Agent;
  let bob: Agent;

  before(async () => {
    hub = await startHub();
    alice = await connectAgent({ socket: hub.socket, name: 'alice', session: 'alice-1' });
    bob = await connectAgent({ socket: hub.socket, name: 'bob', session: 'bob-1' });
  });
  after(async () => {
    await alice?.close();
    await bob?.close();
    await hub?.stop();
  });

  it('declares the channel capability and exactly the contract tools', async () => {
    const caps = alice.client.getServerCapabilities();
    assert.deepEqual(caps?.experimental?.['claude/channel'], {});
    const tools = (await alice.client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(tools, [
      'ack',
      'get_message',
      'get_receipts',
      'get_unread_summary',
      'inbox',
      'list_peers',
      'mark_read',
      'pending',
      'report_result',
      'search_history',
      'send_handoff',
      'whoami',
    ]);
  });

  it('pushes once, and the sender sees each recipient-written receipt with who, session, node and when', async () => {
    await bob.client.subscribeResource({ uri: 'handoff://inbox' });
    const before = bob.pushes.length;
    const sent = await alice.ok('send_handoff', { to: 'bob', body: 'Review PR #12 please', thread: 'pr-12' });
    assert.equal(sent.state, 'pushed');
    assert.deepEqual(sent.recipients, [
      { identity: 'bob', state: 'pushed', sessions: 1, seen_when: 'when_it_calls_inbox' },
    ]);
    const id = sent.message_id;

    await bob.waitForPushes(before + 1);
    await waitFor(() => bob.resourceUpdates > 0, 5000, 'resources/updated');
    const push = bob.pushes[before];
    assert.equal(push.meta.message_id, id);
    assert.equal(push.meta.from, 'alice');
    assert.equal(push.meta.thread, 'pr-12');
    assert.equal(push.meta.replayed, 'false');
    assert.equal(push.meta.chase, 'false');
    assert.match(push.content, /<(handoff-body-[0-9a-f]{12}) id="[0-9A-Z]{26}">\nReview PR #12 please\n<\/\1>/);
    assert.match(push.content, /not instructions/);

    // Unacked: every tool result of bob's carries the footer.
    const who = await bob.call('whoami');
    assert.ok(
      who.content.some((c) => c.type === 'text' && c.text.startsWith('unacked handoffs: 1')),
      'footer on an unacked recipient',
    );

    // Nothing is counted as read or acked by the push itself (G3). The push's journal record
    // lands a moment after the push: wait for it, then look at the state it left.
    let receipts = await waitUntil(
      async () => {
        const r = await alice.ok('get_receipts', { message_id: id });
        return r.deliveries[0].pushes.length > 0 && r;
      },
      10_000,
      'the push journaled',
    );
    assert.equal(receipts.deliveries[0].state, 'pushed');
    assert.equal(receipts.deliveries[0].receipts.length, 0);

    await bob.ok('mark_read', { message_id: id });
    await bob.ok('ack', { message_id: id });
    const pend = await alice.ok('pending');
    assert.equal(pend.pending.find((e: any) => e.id === id).recipients[0].state, 'acked');
    await bob.ok('report_result', { message_id: id, outcome: 'done', summary: 'LGTM, merged' });

    receipts = await alice.ok('get_receipts', { message_id: id });
    const d = receipts.deliveries[0];
    assert.equal(d.state, 'done');
    assert.deepEqual(
      d.receipts.map((r: any) => r.kind),
      ['read', 'ack', 'result'],
    );
    for (const r of d.receipts) {
      assert.equal(r.by, 'bob');
      assert.equal(r.session, sessionLabel('bob-1'), 'a label, never the session key itself');
      assert.match(r.node, /.+/);
      assert.ok(Date.parse(r.at) > Date.now() - 60_000);
    }
    assert.equal(d.receipts[2].outcome, 'done');
    assert.equal(d.pushes.length, 1, 'pushed to one session, once');

    const after = await bob.call('whoami');
    assert.ok(
      !after.content.some((c) => c.type === 'text' && c.text.startsWith('unacked handoffs')),
      'footer gone after ack',
    );
    assert.equal(bob.pushes.filter((p) => p.meta.message_id === id).length, 1, 'exactly one push');
    const handled = await bob.ok('get_message', { message_id: id });
    assert.equal(handled.handled, true);
  });

  it('queues for an identity with no live session, and pushes it (once) when it connects', async () => {
    const carol = await connectAgent({ socket: hub.socket, name: 'carol', session: 'carol-1' });
    await carol.close();
    // Until the hub has seen the close, carol still counts as live and the send would push.
    await waitUntil(
      async () => (await alice.ok('list_peers')).peers.find((p: any) => p.identity === 'carol')?.live_sessions === 0,
      10_000,
      'the hub to notice carol leave',
    );
    const sent = await alice.ok('send_handoff', { to: 'carol', body: 'Write the changelog' });
    assert.equal(sent.state, 'queued');
    const peers = await alice.ok('list_peers');
    assert.equal(
      peers.peers.find((p: any) => p.identity === 'carol').ghost,
      true,
      'carol is a ghost: unacked mail, nobody connected',
    );
    const carol2 = await connectAgent({ socket: hub.socket, name: 'carol', session: 'carol-1' });
    await carol2.waitForPushes(1);
    // A second push of it would come before the push of a message sent now.
    const later = await alice.ok('send_handoff', { to: 'carol', body: 'and the release notes' });
    await carol2.waitForPushes(2);
    assert.equal(carol2.pushes.length, 2);
    assert.equal(carol2.pushes[1].meta.message_id, later.message_id, 'pushed once');
    assert.equal(carol2.pushes[0].meta.message_id, sent.message_id);
    assert.equal(carol2.pushes[0].meta.replayed, 'false', 'first push to this identity is not a replay');
    await carol2.close();
  });

  it('G4: refuses unknown identities with suggestions, bad ids, foreign acks and oversize bodies — and keeps serving', async () => {
    const typo = await alice.call('send_handoff', { to: 'bbo', body: 'x' });
    assert.equal(typo.isError, true);
    assert.equal(typo.structuredContent.error.code, 'unknown_identity');
    assert.deepEqual(typo.structuredContent.error.suggestions, ['bob']);
    assert.match((typo.content[0] as any).text, /Did you mean "bob"\?/);
    for (const wrong of ['Bob', 'bo', 'bobb', 'b0b']) {
      const r = await alice.call('send_handoff', { to: wrong, body: 'x' });
      assert.equal(r.isError, true, `${wrong} must be refused`);
      assert.ok(r.structuredContent.error.suggestions.includes('bob'), `${wrong} suggests bob`);
    }
    const invalid = await alice.call('send_handoff', { to: '../etc/passwd', body: 'x' });
    assert.equal(invalid.structuredContent.error.code, 'invalid_identity');

    const badId = await bob.call('ack', { message_id: 'not-an-id' });
    assert.equal(badId.isError, true);
    assert.match((badId.content[0] as any).text, /26-character message id/);
    const unknownId = await bob.call('ack', { message_id: '01JD3V7W2K8Q5X9Y4Z6A1B2C3D' });
    assert.equal(unknownId.structuredContent.error.code, 'unknown_message');

    const toBob = await alice.ok('send_handoff', { to: 'bob', body: 'only bob may ack this' });
    const foreign = await alice.call('ack', { message_id: toBob.message_id });
    assert.equal(foreign.structuredContent.error.code, 'not_addressed_to_you');
    const state = await alice.ok('get_receipts', { message_id: toBob.message_id });
    assert.equal(state.deliveries[0].receipts.length, 0, 'a refused ack writes nothing');
    // Only its sender and recipients may read a message.
    const eve = await connectAgent({ socket: hub.socket, name: 'eve' });
    try {
      for (const tool of ['get_message', 'get_receipts']) {
        const peek = await eve.call(tool, { message_id: toBob.message_id });
        assert.equal(peek.structuredContent.error?.code, 'not_addressed_to_you', `${tool} by a third party`);
        assert.ok(
          !JSON.stringify(peek).includes('only bob may ack this'),
          `${tool} shows a third party nothing of the body`,
        );
      }
    } finally {
      await eve.close();
    }

    const huge = await alice.call('send_handoff', { to: 'bob', body: 'x'.repeat(70_000) });
    assert.equal(huge.structuredContent.error.code, 'payload_too_large');
    assert.match((huge.content[0] as any).text, /70000 bytes; the limit is 65536/);
    const empty = await alice.call('send_handoff', { to: 'bob', body: '' });
    assert.equal(empty.isError, true);
    const badResult = await bob.call('report_result', { message_id: toBob.message_id, outcome: 'maybe', summary: 's' });
    assert.equal(badResult.isError, true);

    // Still serving.
    const ok = await alice.ok('send_handoff', { to: 'bob', body: 'still here?' });
    assert.equal(ok.state, 'pushed');
  });

  it('G6: the same idempotency key creates one message; a repeated body is a probable duplicate unless insisted', async () => {
    const first = await alice.ok('send_handoff', { to: 'bob', body: 'deploy staging', idempotency_key: 'deploy-1' });
    const again = await alice.ok('send_handoff', { to: 'bob', body: 'deploy staging', idempotency_key: 'deploy-1' });
    const racing = await Promise.all(
      [1, 2, 3].map(() => alice.ok('send_handoff', { to: 'bob', body: 'deploy prod', idempotency_key: 'deploy-2' })),
    );
    assert.equal(again.message_id, first.message_id);
    assert.equal(again.duplicate.why, 'idempotency_key');
    assert.equal(new Set(racing.map((r) => r.message_id)).size, 1, 'concurrent retries with one key: one message');

    const a = await alice.ok('send_handoff', { to: 'bob', body: 'run the migrations' });
    const b = await alice.ok('send_handoff', { to: 'bob', body: 'run the migrations' });
    assert.equal(b.message_id, a.message_id);
    assert.equal(b.duplicate.why, 'probable_duplicate');
    const c = await alice.ok('send_handoff', { to: 'bob', body: 'run the migrations', insist: true });
    assert.notEqual(c.message_id, a.message_id);

    const inbox = await bob.ok('inbox', { limit: 200 });
    const count = (body: string) => inbox.messages.filter((m: any) => plainBody(m) === body).length;
    assert.equal(count('deploy staging'), 1);
    assert.equal(count('deploy prod'), 1);
    assert.equal(count('run the migrations'), 2);
  });

  it('G5: FIFO per sender→recipient', async () => {
    const start = bob.pushes.length;
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push((await alice.ok('send_handoff', { to: 'bob', body: `step ${i}` })).message_id);
    await bob.waitForPushes(start + 20);
    assert.deepEqual(
      bob.pushes.slice(start).map((p) => p.meta.message_id),
      ids,
    );
    // Concurrent sends are pushed in the order their seq was assigned.
    const concurrent = await Promise.all(
      Array.from({ length: 20 }, (_, i) => alice.ok('send_handoff', { to: 'bob', body: `parallel ${i}` })),
    );
    await bob.waitForPushes(start + 40);
    const bySeq = [...concurrent].sort((x, y) => x.seq - y.seq).map((r) => r.message_id);
    assert.deepEqual(
      bob.pushes.slice(start + 20).map((p) => p.meta.message_id),
      bySeq,
    );
  });
});

// G2: one push per session. A session that reconnects 20 times while messages flow gets each
// message once per connection at most, never unflagged twice, and none lost; two sessions on
// one identity each get their own single copy.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectAgent, type ChannelPush } from '../helpers/agent';
import { waitFor } from '../helpers/wait';
import { startHub } from '../helpers/hubProcess';

describe('G2: one push per session', () => {
  it('20 reconnects of one session while messages flow: 0 lost, 0 unflagged duplicates, replays flagged', async () => {
    const hub = await startHub();
    try {
      const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
      const first = await connectAgent({ socket: hub.socket, name: 'bob', session: 'bob-stable' });
      const connections: ChannelPush[][] = [first.pushes];
      let bob = first;
      const sent: string[] = [];
      let sending = true;
      const sender = (async () => {
        for (let i = 0; sending; i++) {
          sent.push((await alice.ok('send_handoff', { to: 'bob', body: `work item ${i}` })).message_id);
          await new Promise((r) => setTimeout(r, 5)); // sleep: the sender's pace, not a wait
        }
      })();
      for (let i = 0; i < 20; i++) {
        const before = sent.length; // two to four messages flow to each connection before it drops
        await waitFor(() => sent.length >= before + 2 + Math.floor(Math.random() * 3), 10_000, 'messages flowing');
        await bob.close();
        bob = await connectAgent({ socket: hub.socket, name: 'bob', session: 'bob-stable' });
        connections.push(bob.pushes);
      }
      sending = false;
      await sender;
      // The last connection has caught up with everything (replay limit 50 per attach) once a
      // message sent now reaches it: what the hub pushes it comes in order.
      const last = (await alice.ok('send_handoff', { to: 'bob', body: 'the last item' })).message_id;
      sent.push(last);
      await waitFor(() => bob.pushes.some((p) => p.meta.message_id === last), 10_000, 'the last item pushed');
      const all = connections.flat();
      const perConnectionDuplicates = connections.map((c) => c.length - new Set(c.map((p) => p.meta.message_id)).size);
      const unflagged = new Map<string, number>();
      for (const p of all)
        if (p.meta.replayed === 'false') unflagged.set(p.meta.message_id, (unflagged.get(p.meta.message_id) ?? 0) + 1);
      const received = new Set(all.map((p) => p.meta.message_id));
      const summary = await bob.ok('get_unread_summary');
      // Replay is bounded: past the bound a notice tells the agent to read its inbox, as it does here.
      const truncated = all.some((p) => /Replay truncated/.test(p.content));
      const inbox = new Set<string>();
      for (let after: number | undefined = 0; after !== undefined;) {
        const page: any = await bob.ok('inbox', { limit: 100, after_seq: after });
        page.messages.forEach((m: any) => inbox.add(m.message_id));
        after = page.next_after_seq;
      }
      assert.equal(inbox.size, sent.length, 'paging the inbox reaches every open message');
      const lost = sent.filter((id) => !received.has(id) && !(truncated && inbox.has(id)));
      const onlyInInbox = sent.filter((id) => !received.has(id)).length;
      const replays = all.filter((p) => p.meta.replayed === 'true').length;
      console.log(
        `# 20 reconnects: ${sent.length} sent, ${all.length} pushes over ${connections.length} connections, ${replays} flagged replays, ${onlyInInbox} reached only through the inbox after a truncation notice, lost ${lost.length}, unflagged duplicates ${[...unflagged.values()].filter((n) => n > 1).length}`,
      );
      assert.ok(sent.length >= 40, 'messages flowed during the storm');
      assert.deepEqual(
        perConnectionDuplicates,
        connections.map(() => 0),
        'no connection got a message twice',
      );
      assert.equal(
        [...unflagged.values()].filter((n) => n > 1).length,
        0,
        'no message arrived twice without the replayed flag',
      );
      assert.equal(lost.length, 0, 'every message reached bob');
      assert.ok(replays > 0, 'unacked messages were replayed on reconnect, flagged');
      assert.equal(summary.unacked, sent.length);

      // Once acked, nothing is replayed on the next reconnect.
      for (const id of sent) await bob.ok('ack', { message_id: id });
      await bob.close();
      const calm = await connectAgent({ socket: hub.socket, name: 'bob', session: 'bob-stable' });
      // A replay would come before the push of a message sent now.
      const fresh = (await alice.ok('send_handoff', { to: 'bob', body: 'after the calm' })).message_id;
      await calm.waitForPushes(1);
      assert.deepEqual(
        calm.pushes.map((p) => p.meta.message_id),
        [fresh],
        'acked messages are not replayed',
      );
      await calm.close();
      await alice.close();
    } finally {
      await hub.stop();
    }
  });

  it('two sessions on one identity each receive each message exactly once', async () => {
    const hub = await startHub();
    try {
      const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
      const left = await connectAgent({ socket: hub.socket, name: 'bob', session: 'bob-left' });
      const right = await connectAgent({ socket: hub.socket, name: 'bob', session: 'bob-right' });
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) {
        const r = await alice.ok('send_handoff', { to: 'bob', body: `shared ${i}` });
        assert.equal(r.recipients[0].sessions, 2);
        ids.push(r.message_id);
      }
      // A second copy would come before the push of a message sent after the fifty.
      ids.push((await alice.ok('send_handoff', { to: 'bob', body: 'shared, the last' })).message_id);
      await left.waitForPushes(51);
      await right.waitForPushes(51);
      for (const s of [left, right]) {
        assert.equal(s.pushes.length, 51);
        assert.deepEqual(
          s.pushes.map((p) => p.meta.message_id),
          ids,
        );
        assert.ok(s.pushes.every((p) => p.meta.replayed === 'false'));
      }
      await Promise.all([alice.close(), left.close(), right.close()]);
    } finally {
      await hub.stop();
    }
  });

  it('a reconnect with the same session key replaces its entry instead of adding a stale peer', async () => {
    const hub = await startHub();
    try {
      const watcher = await connectAgent({ socket: hub.socket, name: 'watcher' });
      const a = await connectAgent({ socket: hub.socket, name: 'bob', session: 'same' });
      const b = await connectAgent({ socket: hub.socket, name: 'bob', session: 'same' });
      const peers = await watcher.ok('list_peers');
      assert.equal(peers.peers.find((p: any) => p.identity === 'bob').live_sessions, 1);
      await Promise.all([a.close().catch(() => undefined), b.close(), watcher.close()]);
    } finally {
      await hub.stop();
    }
  });
});

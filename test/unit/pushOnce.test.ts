// G2 at the hub, in process: one push per message per session, whoever asks for it; a replay is
// flagged even before the first push's record is on disk; and a push counts only if written (G1).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import type { PushPayload, Session } from '../../extension/hub/presence/sessions';
import { tempDir } from '../helpers/hubProcess';

function fakeSession(key: string, identity: string, roles: string[], got: PushPayload[], open = () => true): Session {
  return {
    key,
    identity,
    roles,
    client: 'test',
    connectedAt: Date.now(),
    lastSeen: Date.now(),
    pushed: new Set(),
    isOpen: open,
    deliver: (p) => (open() ? (got.push(p), true) : false),
    close: () => undefined,
  };
}

async function withHub(name: string, body: (hub: Hub) => Promise<void>): Promise<void> {
  const hub = new Hub({ workspace: tempDir(`${name}-ws`), storeDir: tempDir(`${name}-store`), node: 'n', tickMs: 0 });
  await hub.start();
  try {
    await hub.remember('alice');
    await hub.remember('bob');
    await body(hub);
  } finally {
    await hub.close();
  }
}

const alice = { identity: 'alice', session: 'a-1', node: 'n' };

describe('one push per message per session', () => {
  it('a session attaching amid concurrent sends gets each exactly once', async () => {
    await withHub('push', async (hub) => {
      for (let round = 0; round < 10; round++) {
        const got: PushPayload[] = [];
        // One send occupies the journal; the attach (new roles: it writes its identity record) and
        // twenty sends then share the next group commit, the attach first: its replay sees the
        // twenty committed before their own pushes run.
        const first = hub.send(alice, { to: ['bob'], body: `round ${round} opener`, insist: true });
        const attaching = hub.attach(fakeSession(`bob-${round}`, 'bob', [`role${round}`], got));
        const sends = Array.from({ length: 20 }, (_, i) =>
          hub.send(alice, { to: ['bob'], body: `round ${round} #${i}`, insist: true }),
        );
        await Promise.all([first, attaching, ...sends]);
        const ids = got.map((p) => p.id).filter(Boolean);
        assert.equal(
          ids.length,
          new Set(ids).size,
          `round ${round}: no message pushed twice to one session (${ids.length} pushes)`,
        );
        hub.detach(hub.sessions.forIdentity('bob')[0]);
      }
    });
  });

  it('asking again to push a message a session already has writes nothing; only a chase goes through', async () => {
    await withHub('push-again', async (hub) => {
      const got: PushPayload[] = [];
      await hub.attach(fakeSession('bob-1', 'bob', [], got));
      const sent = await hub.send(alice, { to: ['bob'], body: 'once only' });
      const hot = hub.state.hot[sent.message_id];
      // Every path that pushes (a send, an ingest from another node, a replay) ends in the same
      // per-connection check: none of them may put a second copy on the connection.
      assert.equal(hub.pushes.toIdentity('bob', hot, 'live'), 0, 'a second live push is refused');
      assert.equal(hub.pushes.toIdentity('bob', hot, 'replayed'), 0, 'a replay to the same connection is refused');
      assert.deepEqual(
        got.map((p) => p.kind),
        ['live'],
      );
      assert.equal(hub.pushes.toIdentity('bob', hot, 'chase'), 1, 'a chase is pushed again, flagged');
      assert.deepEqual(
        got.map((p) => p.kind),
        ['live', 'chase'],
      );
    });
  });

  it('a session reconnecting before the first push is journaled still gets the message flagged replayed', async () => {
    await withHub('push-replay', async (hub) => {
      for (let round = 0; round < 5; round++) {
        const before: PushPayload[] = [];
        const old = fakeSession(`bob-a${round}`, 'bob', [], before);
        await hub.attach(old);
        const sent = await hub.send(alice, { to: ['bob'], body: `reconnect race ${round}` });
        // The push to `old` was written; its journal record is still on its way to the disk. The
        // agent reconnects at once: the new connection must be told it may have seen this before.
        hub.detach(old);
        const after: PushPayload[] = [];
        await hub.attach(fakeSession(`bob-b${round}`, 'bob', [], after));
        assert.deepEqual(
          before.map((p) => [p.id, p.kind]),
          [[sent.message_id, 'live']],
        );
        assert.deepEqual(
          after.filter((p) => p.id === sent.message_id).map((p) => p.kind),
          ['replayed'],
          `round ${round}: the second copy is flagged`,
        );
        await hub.receipt({ identity: 'bob', session: `bob-b${round}`, node: 'n' }, sent.message_id, 'ack');
        hub.detach(hub.sessions.forIdentity('bob')[0]);
      }
    });
  });

  it('a connection that is gone (not yet detached) is not counted as pushed: the send says queued', async () => {
    await withHub('push-gone', async (hub) => {
      const got: PushPayload[] = [];
      let open = true;
      await hub.attach(fakeSession('bob-1', 'bob', [], got, () => open));
      open = false; // the socket died; the hub has not seen the close yet
      const sent = await hub.send(alice, { to: ['bob'], body: 'nobody is listening' });
      assert.equal(sent.state, 'queued');
      assert.deepEqual(
        sent.recipients.map((r) => [r.state, r.sessions]),
        [['queued', 0]],
      );
      assert.equal(got.length, 0);
      assert.equal(hub.state.hot[sent.message_id].deliveries.bob.pushes.length, 0, 'no push recorded');
      // The next connection of bob gets it as a first push, not a replay.
      const next: PushPayload[] = [];
      await hub.attach(fakeSession('bob-2', 'bob', [], next));
      assert.deepEqual(
        next.map((p) => [p.id, p.kind]),
        [[sent.message_id, 'live']],
      );
    });
  });

  it("a hub that dies before a push record lands (kill -9): after the restart the next push is flagged replayed, as is a replay's first push", async () => {
    const storeDir = tempDir('push-lost-store');
    const workspace = tempDir('push-lost-ws');
    const start = async () => {
      const hub = new Hub({ workspace, storeDir, node: 'n', tickMs: 0 });
      await hub.start();
      // What a kill -9 right after the pushes does: their records never reach the journal.
      const commit = hub.journal.commit.bind(hub.journal);
      hub.journal.commit = (events) =>
        events.some((e) => e.type === 'pushed') ? new Promise(() => undefined) : commit(events);
      return hub;
    };
    let hub = await start();
    await hub.remember('alice');
    await hub.remember('carol');
    const first: PushPayload[] = [];
    await hub.attach(fakeSession('bob-1', 'bob', [], first));
    const live = await hub.send(alice, { to: ['bob'], body: 'pushed live, its record lost' });
    const queued = await hub.send(alice, { to: ['carol'], body: 'queued for carol' });
    assert.deepEqual(
      first.map((p) => [p.id, p.kind]),
      [[live.message_id, 'live']],
    );
    const carol1: PushPayload[] = [];
    await hub.attach(fakeSession('carol-1', 'carol', [], carol1));
    assert.deepEqual(
      carol1.map((p) => [p.id, p.kind]),
      [[queued.message_id, 'live']],
      'a first push on attach',
    );
    await hub.close();

    hub = await start();
    try {
      const bob2: PushPayload[] = [];
      await hub.attach(fakeSession('bob-2', 'bob', [], bob2));
      assert.deepEqual(
        bob2.map((p) => [p.id, p.kind]),
        [[live.message_id, 'replayed']],
        'bob may have seen it: flagged, not a second first push',
      );
      const carol2: PushPayload[] = [];
      await hub.attach(fakeSession('carol-2', 'carol', [], carol2));
      assert.deepEqual(
        carol2.map((p) => [p.id, p.kind]),
        [[queued.message_id, 'replayed']],
        'the replay wrote its intent before its first push',
      );
    } finally {
      await hub.close();
    }
  });
});

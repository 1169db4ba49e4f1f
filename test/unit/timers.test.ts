// The SLA and TTL timers on a fake clock (the hub's clock is injected): past its SLA an unACKed
// handoff is chased exactly once, past its TTL it is dead-lettered; nothing sleeps.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import type { PushPayload, Session } from '../../extension/hub/presence/sessions';
import { fakeSession } from '../helpers/fakeSession';
import { tempDir } from '../helpers/hubProcess';

const session = (key: string, identity: string, got: PushPayload[], now: () => number): Session =>
  fakeSession(identity, key, { connectedAt: now(), lastSeen: now(), deliver: (p) => (got.push(p), true) });

describe('SLA and TTL timers, on a fake clock', () => {
  it('chases once past the SLA, dead-letters past the TTL, and an ACKed handoff is left alone', async () => {
    let t = 1_800_000_000_000;
    const now = () => t;
    const hub = new Hub({
      workspace: tempDir('timers-ws'),
      storeDir: tempDir('timers-store'),
      node: 'n',
      clock: now,
      tickMs: 0,
    });
    await hub.start();
    try {
      await hub.remember('alice');
      const got: PushPayload[] = [];
      await hub.attach(session('bob-1', 'bob', got, now));
      const alice = { identity: 'alice', session: 'a-1', node: 'n' };
      const late = await hub.send(alice, {
        to: ['bob'],
        body: 'review the migration',
        slaMs: 60_000,
        ttlMs: 3_600_000,
      });
      const acked = await hub.send(alice, { to: ['bob'], body: 'and the changelog', slaMs: 60_000, ttlMs: 3_600_000 });
      await hub.receipt({ identity: 'bob', session: 'bob-1', node: 'n' }, acked.message_id, 'ack');
      const kinds = (id: string) => got.filter((p) => p.id === id).map((p) => p.kind);
      assert.deepEqual(kinds(late.message_id), ['live']);

      t += 59_000;
      await hub.tick();
      assert.deepEqual(kinds(late.message_id), ['live'], 'not chased before its SLA');
      t += 2_000;
      await hub.tick();
      await hub.tick();
      assert.deepEqual(
        kinds(late.message_id),
        ['live', 'chase'],
        'chased exactly once past its SLA, however often the timer runs',
      );
      assert.deepEqual(kinds(acked.message_id), ['live'], 'an ACKed handoff is never chased');
      assert.equal(hub.pending('alice').find((e) => e.id === late.message_id)?.overdue, true);

      t += 3_600_000;
      await hub.tick();
      const entry = hub.pending('alice').find((e) => e.id === late.message_id);
      assert.equal(entry?.deadLettered, true, 'dead-lettered past its TTL');
      assert.equal(entry?.recipients[0].state, 'failed');
      assert.equal(hub.state.hot[acked.message_id].deliveries.bob.state, 'acked', 'the ACKed one is not dead-lettered');
      assert.deepEqual(kinds(late.message_id), ['live', 'chase'], 'no push after the dead letter');
    } finally {
      await hub.close();
    }
  });

  it('a dead letter survives checkpoints and restarts until a person resolves it (G7: nothing dropped silently)', async () => {
    let t = 1_800_000_000_000;
    const now = () => t;
    const store = tempDir('deadletter-store');
    const open = async () => {
      const hub = new Hub({ workspace: tempDir('deadletter-ws'), storeDir: store, node: 'n', clock: now, tickMs: 0 });
      await hub.start();
      return hub;
    };
    let hub = await open();
    await hub.remember('alice');
    await hub.remember('ghost');
    const sent = await hub.send(
      { identity: 'alice', session: 'a-1', node: 'n' },
      { to: ['ghost'], body: 'anyone there?', ttlMs: 60_000 },
    );
    assert.equal(sent.state, 'queued');
    t += 61_000;
    await hub.tick();
    await hub.close(); // a clean close checkpoints: settled messages move to the archive
    hub = await open();
    try {
      const entry = hub.pending('alice').find((e) => e.id === sent.message_id);
      assert.equal(entry?.deadLettered, true, 'still in the ledger after a checkpoint and a restart');
      assert.match(entry!.recipients[0].failure ?? '', /dead-lettered/);
      await hub.resolve(sent.message_id, 'human', 'nobody owns ghost any more');
      assert.equal(
        hub.pending('alice').find((e) => e.id === sent.message_id),
        undefined,
        'resolved by a person, it leaves',
      );
    } finally {
      await hub.close();
    }
  });
});

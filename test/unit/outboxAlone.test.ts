// The Matrix outbox against a homeserver that keeps a first PUT but loses its answer (a reset
// connection, a homeserver going down): the entry is retried alone under its own txnId, which
// the homeserver dedupes, and never again inside a batch, under the batch's txnId — that would be
// a second copy of the handoff in the room. The backlog behind it still goes out in batches.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import type { Homeserver } from '../../extension/hub/matrix/homeserver';
import { tempDir } from '../helpers/hubProcess';
import { outboxFor } from '../helpers/outbox';
import { waitFor } from '../helpers/wait';

/** A room that keeps one event per txnId, as a homeserver's transaction dedupe does. */
function flakyRoom(failures: number) {
  const room = { failures };
  const events = new Map<string, Record<string, any>>();
  let puts = 0;
  let lost = 0;
  const hs = {
    async send(_room: string, _type: string, txnId: string, content: Record<string, any>): Promise<string> {
      puts++;
      if (!events.has(txnId)) events.set(txnId, content);
      await new Promise((r) => setTimeout(r, 2)); // sleep: the fake homeserver's round trip, not a wait
      if (room.failures-- > 0) {
        lost++;
        throw new Error('socket hang up'); // stored, the answer lost
      }
      return `$${txnId}`;
    },
  };
  const copies = () => {
    const n = new Map<string, number>();
    for (const c of events.values()) {
      for (const id of [
        c['org.handoff.message']?.id,
        ...(c['org.handoff.batch'] ?? []).map((x: any) => x?.message?.id),
      ])
        if (id) n.set(id, (n.get(id) ?? 0) + 1);
    }
    return n;
  };
  return {
    hs: hs as unknown as Homeserver,
    copies,
    heal: () => (room.failures = 0),
    batches: () => [...events.keys()].filter((t) => t.startsWith('batch.')).length,
    puts: () => puts,
    lost: () => lost,
  };
}

describe('Matrix outbox: an entry once PUT alone stays alone', () => {
  it('a first PUT whose answer was lost, with a backlog behind it: every handoff once in the room, the backlog batched', async () => {
    const hub = new Hub({
      workspace: tempDir('outbox-ws'),
      storeDir: tempDir('outbox-store'),
      node: 'nodeA',
      tickMs: 0,
      relayWaitMs: 0,
    });
    await hub.start();
    const room = flakyRoom(3);
    const outbox = outboxFor(hub, room.hs);
    try {
      await hub.remember('alice');
      await hub.remember('bob@nodeB');
      const alice = { identity: 'alice', session: 'a-1', node: 'nodeA' };
      const ids = [(await hub.send(alice, { to: ['bob@nodeB'], body: 'the first, its answer lost' })).message_id];
      const running = outbox.run();
      await waitFor(() => room.lost() > 0, 10_000, 'the first PUT out, its answer lost, before the backlog arrives');
      for (let i = 0; i < 20; i++)
        ids.push((await hub.send(alice, { to: ['bob@nodeB'], body: `backlog #${i}` })).message_id);
      outbox.poke();
      await waitFor(() => outbox.pending === 0, 10_000, 'the outbox to drain');
      outbox.stop();
      await running;
      const copies = room.copies();
      assert.deepEqual(
        ids.filter((id) => copies.get(id) !== 1).map((id) => [id, copies.get(id) ?? 0]),
        [],
        'each handoff in the room exactly once',
      );
      assert.ok(room.batches() > 0, 'the backlog went out in batches');
    } finally {
      outbox.stop();
      await hub.close();
    }
  });

  it('after a restart the oldest loose entries go alone: one may have been PUT before the hub died', async () => {
    const storeDir = tempDir('outbox-restart-store');
    const workspace = tempDir('outbox-restart-ws');
    const room = flakyRoom(Infinity);
    const ids: string[] = [];
    let hub = new Hub({ workspace, storeDir, node: 'nodeA', tickMs: 0, relayWaitMs: 0 });
    await hub.start();
    await hub.remember('alice');
    await hub.remember('bob@nodeB');
    const alice = { identity: 'alice', session: 'a-1', node: 'nodeA' };
    ids.push(
      (await hub.send(alice, { to: ['bob@nodeB'], body: 'PUT before the hub died, never recorded' })).message_id,
    );
    let outbox = outboxFor(hub, room.hs);
    let running = outbox.run();
    await waitFor(() => room.puts() > 0, 5000, 'a PUT');
    outbox.stop();
    await running;
    for (let i = 0; i < 20; i++)
      ids.push((await hub.send(alice, { to: ['bob@nodeB'], body: `queued while down #${i}` })).message_id);
    await hub.close();

    room.heal();
    hub = new Hub({ workspace, storeDir, node: 'nodeA', tickMs: 0, relayWaitMs: 0 });
    await hub.start();
    outbox = outboxFor(hub, room.hs);
    running = outbox.run();
    try {
      await waitFor(() => outbox.pending === 0, 10_000, 'the outbox to drain');
      const copies = room.copies();
      assert.deepEqual(
        ids.filter((id) => copies.get(id) !== 1).map((id) => [id, copies.get(id) ?? 0]),
        [],
        'each handoff in the room exactly once',
      );
      assert.ok(room.batches() > 0, 'the rest of the backlog went out in batches');
    } finally {
      outbox.stop();
      await running;
      await hub.close();
    }
  });
});

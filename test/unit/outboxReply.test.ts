// A send's reply says `on_homeserver` only once the ledger says so too: the homeserver's event id
// is journaled (`relayed`) before the waiting reply is answered, so a sender that asks
// get_receipts right after its send never finds the handoff still `queued`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { tempDir } from '../helpers/hubProcess';
import { outboxFor } from '../helpers/outbox';

describe('Matrix outbox: the reply and the ledger agree', () => {
  it('a reply waiting for the homeserver is answered after the relayed record is written', async () => {
    const hub = new Hub({ workspace: tempDir('reply-ws'), storeDir: tempDir('reply-store'), node: 'nodeA', tickMs: 0 });
    await hub.start();
    const hs = { send: (_r: string, _t: string, txnId: string) => Promise.resolve(`$${txnId}`) };
    const outbox = outboxFor(hub, hs);
    try {
      await hub.remember('alice');
      await hub.remember('bob@nodeB');
      const alice = { identity: 'alice', session: 'a-1', node: 'nodeA' };
      const ids: string[] = [];
      for (let i = 0; i < 20; i++)
        ids.push((await hub.send(alice, { to: ['bob@nodeB'], body: `handoff #${i}` })).message_id);
      const replies = ids.map(async (id) => {
        const r = await outbox.whereIs(id, 10_000);
        // What get_receipts would read at the moment the reply is given.
        return { id, state: r.state, relayed: !!hub.state.hot[id]?.relayed };
      });
      const running = outbox.run();
      const answered = await Promise.all(replies);
      outbox.stop();
      await running;
      assert.deepEqual(
        answered.filter((a) => a.state !== 'on_homeserver' || !a.relayed),
        [],
        'every reply on_homeserver, with the relayed record already in the ledger',
      );
    } finally {
      outbox.stop();
      await hub.close();
    }
  });
});

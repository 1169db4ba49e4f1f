// What a linked repository's hub delivers, as the receiving hub takes it (hub/link/localLinks.ts,
// bus/links.ts): a delivery sent again adds nothing (idempotent ingest), and the other hub speaks
// only for its own repository with its own key — never for an identity of this one (G3).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { loadNodeKey, signWire } from '../../extension/hub/matrix/keys';
import { wireOf } from '../../extension/hub/matrix/wire';
import { tempDir } from '../helpers/hubProcess';

async function pair() {
  const backend = new Hub({ workspace: tempDir('backend'), storeDir: tempDir('backend-store'), tickMs: 0 });
  const frontend = new Hub({ workspace: tempDir('frontend'), storeDir: tempDir('frontend-store'), tickMs: 0 });
  await Promise.all([backend.start(), frontend.start()]);
  await backend.links.rename('backend');
  await frontend.links.rename('frontend');
  await backend.remember('bob@frontend');
  await frontend.remember('bob');
  await frontend.remember('carol');
  const key = loadNodeKey(backend.options.storeDir);
  const signer = (w: object) => signWire(key, w);
  /** The wire items of backend's outbox, as its link sends them to frontend. */
  const items = () =>
    Object.values(backend.state.relay?.outbox ?? {})
      .sort((a, b) => a.order - b.order)
      .map((e) => wireOf(e, 'backend', signer));
  return { backend, frontend, key, items };
}

describe('a linked repository delivers here', () => {
  it('the same delivery twice (the sender crashed before it recorded the answer): taken once', async () => {
    const { backend, frontend, key, items } = await pair();
    try {
      const alice = { identity: 'alice', session: 'a-1', node: backend.node };
      const sent = await backend.send(alice, { to: ['bob@frontend'], body: 'once, please' });
      const first = await frontend.links.ingest('backend', key.publicKey, items());
      const again = await frontend.links.ingest('backend', key.publicKey, items());
      assert.deepEqual(first.results, ['taken']);
      assert.deepEqual(again.results, ['taken']); // answered as held, so the sender's outbox lets go
      const open = frontend.inbox('bob', { limit: 50 });
      assert.equal(open.filter((i) => i.message.id === sent.message_id).length, 1);
      assert.equal(open[0].message.from, 'alice@backend');
      // Sent twice in one delivery as well.
      const [item] = items();
      const both = await frontend.links.ingest('backend', key.publicKey, [item, item]);
      assert.deepEqual(both.results, ['taken', 'taken']);
      assert.equal(frontend.inbox('bob', { limit: 50 }).length, 1);
    } finally {
      await Promise.all([backend.close(), frontend.close()]);
    }
  });

  it('speaks only with its own key, and only for its own repository', async () => {
    const { backend, frontend, key, items } = await pair();
    try {
      const alice = { identity: 'alice', session: 'a-1', node: backend.node };
      await backend.send(alice, { to: ['bob@frontend'], body: 'signed by whom?' });
      const [item] = items() as { message: { sig?: string; from: string } }[];
      // Another key than the one the link recorded.
      const other = loadNodeKey(tempDir('other-store'));
      const forgedKey = await frontend.links.ingest('backend', other.publicKey, [item]);
      assert.match(JSON.stringify(forgedKey.results), /not signed by backend's node key/);
      // Signed right, but in another repository's name.
      const { sig: _s, ...rest } = item.message;
      const posing = { ...rest, from: 'mallory@elsewhere', node: 'elsewhere' };
      const asOther = await frontend.links.ingest('backend', key.publicKey, [
        { message: { ...posing, sig: signWire(key, posing) } },
      ]);
      assert.match(JSON.stringify(asOther.results), /claims a sender of another repository/);
      assert.equal(frontend.inbox('bob', { limit: 50 }).length, 0);

      // A receipt for frontend's own handoff, written by backend in the name of frontend's carol.
      const bobHere = { identity: 'bob', session: 'b-1', node: frontend.node };
      await frontend.remember('alice@backend');
      const mine = await frontend.send(bobHere, { to: ['carol'], body: 'carol, yours' });
      const receipt = {
        message_id: mine.message_id,
        sender: 'bob@frontend',
        kind: 'ack',
        by: 'carol@frontend',
        session: 's',
        node: 'frontend', // posing as this repository's own node
        at: Date.now(),
      };
      const forged = await frontend.links.ingest('backend', key.publicKey, [
        { receipt: { ...receipt, sig: signWire(key, receipt) } },
      ]);
      assert.match(JSON.stringify(forged.results), /who is not of backend/);
      assert.equal(frontend.state.hot[mine.message_id].deliveries.carol.receipts.length, 0);
    } finally {
      await Promise.all([backend.close(), frontend.close()]);
    }
  });
});

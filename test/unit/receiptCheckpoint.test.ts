// A receipt answered "recorded" is recorded, even when a checkpoint archives its message in the
// meantime. A receipt is decided against the hot set and queued while a checkpoint runs; the
// checkpoint then moved the (settled) message to the archive, and applying the receipt found no
// message and dropped it — on an ordinary disk, no crash needed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from '../../extension/hub/bus/model';
import { Hub } from '../../extension/hub/hub';
import type { PushPayload, Session } from '../../extension/hub/presence/sessions';
import { AppendLog } from '../../extension/hub/store/appendLog';
import { Store } from '../../extension/hub/store/store';
import { waitFor } from '../helpers/agent';
import { fakeSession } from '../helpers/fakeSession';
import { tempDir } from '../helpers/hubProcess';

const alice = { identity: 'alice', session: 'a-1', node: 'n' };
const bob = { identity: 'bob', session: 'bob-1', node: 'n' };
/** Past the store's 4 MiB of journal a checkpoint is due. */
const BULK = 'x'.repeat(60 * 1024);

const session = (identity: string, key: string, deliver: (p: PushPayload) => void): Session =>
  fakeSession(identity, key, { deliver: (p) => (deliver(p), true) });

/** Holds the archive's writes while `hold` is set (the checkpoint's move of settled messages). */
function holdArchiveWrites(): { hold: boolean; held: (() => void)[]; restore: () => void } {
  const proto = AppendLog.prototype as { writeBatch: AppendLog<unknown>['writeBatch'] };
  const writeBatch = proto.writeBatch;
  const gate = { hold: false, held: [] as (() => void)[], restore: () => void (proto.writeBatch = writeBatch) };
  proto.writeBatch = function (this: AppendLog<unknown>, values) {
    if (!gate.hold || !this.path.includes('/history/')) return writeBatch.call(this, values);
    return new Promise((resolve, reject) =>
      gate.held.push(() => void writeBatch.call(this, values).then(resolve, reject)),
    );
  };
  return gate;
}

const results = (view: Awaited<ReturnType<Hub['lookup']>>) =>
  view?.deliveries.find((d) => d.recipient === 'bob')?.receipts.filter((r) => r.kind === 'result').length ?? 0;

describe('receipts across a checkpoint', () => {
  it('a result reported while a checkpoint archives its settled message is kept, and read back after a restart', async () => {
    const storeDir = tempDir('receipt-cp-store');
    const gate = holdArchiveWrites();
    let hub = new Hub({ workspace: tempDir('receipt-cp-ws'), storeDir, node: 'n', tickMs: 0 });
    try {
      await hub.start();
      await hub.remember('carol');
      await hub.attach(session('bob', 'bob-1', () => undefined));
      // No ACK required: settled once pushed, while the recipient may still report on it.
      const sent = await hub.send(alice, { to: ['bob'], body: 'tag the release', requiresAck: false });
      await waitFor(
        () => hub.state.hot[sent.message_id]?.deliveries.bob.state === 'pushed',
        5000,
        'the push to be recorded',
      );

      gate.hold = true;
      for (let i = 0; gate.held.length === 0; i++) {
        assert.ok(i < 200, 'a checkpoint came due');
        await hub.send(alice, { to: ['carol'], body: `${i} ${BULK}` });
      }
      // The checkpoint is writing the settled message to the archive; bob reports on it now.
      const answer = hub.receipt(bob, sent.message_id, 'result', 'done', 'tagged v1.2');
      await new Promise((r) => setImmediate(r));
      gate.hold = false;
      for (const release of gate.held.splice(0)) release();
      assert.equal((await answer).recorded, true);
      assert.equal(results(await hub.lookup(sent.message_id)), 1, 'the recorded result is there to read');

      await hub.close();
      hub = new Hub({ workspace: tempDir('receipt-cp-ws'), storeDir, node: 'n', tickMs: 0 });
      await hub.start();
      assert.equal(await hub.journal.isArchived(sent.message_id), true, 'settled, it is archived by the close');
      assert.equal(results(await hub.lookup(sent.message_id)), 1, 'the result is in the archive');
      const late = await hub.receipt(bob, sent.message_id, 'ack');
      assert.deepEqual(
        { recorded: late.recorded, state: late.state },
        { recorded: false, state: 'settled' },
        'a receipt to a message settled before says nothing changed',
      );
    } finally {
      gate.hold = false;
      for (const release of gate.held.splice(0)) release();
      gate.restore();
      await hub.close();
    }
  });

  it('four senders and a recipient reporting done on each push: every result answered "recorded" reads back', async () => {
    const hub = new Hub({
      workspace: tempDir('receipt-load-ws'),
      storeDir: tempDir('receipt-load-store'),
      node: 'n',
      tickMs: 0,
    });
    await hub.start();
    try {
      const answers: Promise<{ id: string; recorded: boolean }>[] = [];
      // The recipient answers a turn after the push, as an agent does: by then the push may be recorded.
      await hub.attach(
        session('bob', 'bob-1', (p) =>
          setImmediate(() => {
            answers.push(hub.receipt(bob, p.id, 'result', 'done').then((r) => ({ id: p.id, recorded: r.recorded })));
          }),
        ),
      );
      const body = 'y'.repeat(40 * 1024);
      const PER_SENDER = 300;
      await Promise.all(
        ['s1', 's2', 's3', 's4'].map(async (from) => {
          for (let i = 0; i < PER_SENDER; i++)
            await hub.send(
              { identity: from, session: `${from}-1`, node: 'n' },
              { to: ['bob'], body: `${from} ${i} ${body}`, requiresAck: false },
            );
        }),
      );
      await waitFor(() => answers.length === 4 * PER_SENDER, 10_000, 'every push');
      const recorded = (await Promise.all(answers)).filter((a) => a.recorded);
      let lost = 0;
      for (const a of recorded) if (results(await hub.lookup(a.id)) !== 1) lost++;
      assert.equal(
        lost,
        0,
        `${lost} of ${recorded.length} results answered "recorded" read back without their result (${hub.journal.status.archived} archived)`,
      );
    } finally {
      await hub.close();
    }
  });

  it('a relay success queued while a checkpoint archives its settled message (it names only its outbox entry) is kept', async () => {
    const gate = holdArchiveWrites();
    const store = await Store.open(tempDir('relayed-cp-store'), 'n', {
      idempotencyWindowMs: 60_000,
      minCheckpointBytes: 1,
    });
    try {
      const m: Message = {
        id: '01JD3V7W2K8Q5X9Y4Z00000001',
        seq: 1,
        from: 'alice',
        address: ['bob@far'],
        recipients: ['bob@far'],
        thread: 't',
        body: 'over there',
        attachments: [],
        requiresAck: false,
        slaMs: 60_000,
        ttlMs: 3_600_000,
        sentAt: Date.now(),
        sentBySession: 's',
        node: 'n',
      };
      gate.hold = true;
      // Settled once pushed (no ACK required); the batch is past the checkpoint's size, so one starts and holds on the archive.
      await store.commit([
        { type: 'sent', message: m },
        {
          type: 'pushed',
          id: m.id,
          recipient: 'bob@far',
          push: { session: 'b', node: 'far', at: Date.now(), kind: 'live' },
        },
        { type: 'outboxed', txnId: 'txn-1', at: Date.now(), item: { kind: 'message', message: m } },
      ]);
      await waitFor(() => gate.held.length === 1, 5000, 'the checkpoint to write the archive');
      const relayed = store.commit([{ type: 'relayed', txnId: 'txn-1', eventId: '$e1', at: Date.now() }]);
      gate.hold = false;
      for (const release of gate.held.splice(0)) release();
      await relayed;
      assert.equal(store.state.hot[m.id]?.relayed?.eventId, '$e1', 'still open, and marked relayed');
      await store.close();
    } finally {
      gate.hold = false;
      for (const release of gate.held.splice(0)) release();
      gate.restore();
    }
  });
});

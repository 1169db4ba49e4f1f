// G1 in process, on a real disk: a send is acknowledged only once the journal write holding it
// has been fdatasync'd. The test holds each fdatasync of the real file handle (the write itself
// runs) and watches whether the send's answer waits for it — it must, however long the disk takes.
import assert from 'node:assert/strict';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import type { PushPayload } from '../../extension/hub/presence/sessions';
import { waitFor } from '../helpers/agent';
import { fakeSession } from '../helpers/fakeSession';
import { tempDir } from '../helpers/hubProcess';

/** Every turn of the event loop the hub could have used to answer early. */
async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

describe('G1: persist before acknowledge', () => {
  it('send_handoff and a receipt answer only after the fdatasync of the journal write that holds them', async () => {
    const dir = tempDir('g1-sync');
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const datasync = proto.datasync;
    let gate = false;
    const held: (() => void)[] = [];
    proto.datasync = function (this: FileHandle) {
      if (!gate) return datasync.call(this);
      return new Promise<void>((resolve, reject) => held.push(() => void datasync.call(this).then(resolve, reject)));
    };
    const hub = new Hub({ workspace: tempDir('g1-ws'), storeDir: join(dir, 'store'), node: 'n', tickMs: 0 });
    try {
      await hub.start();
      await hub.remember('alice');
      const got: PushPayload[] = [];
      const bob = fakeSession('bob', 'bob-1', { deliver: (p) => (got.push(p), true) });
      await hub.attach(bob);

      gate = true;
      let answered = false;
      const sending = hub
        .send({ identity: 'alice', session: 'a-1', node: 'n' }, { to: ['bob'], body: 'durable first' })
        .then((r) => ((answered = true), r));
      await waitFor(() => held.length === 1, 5000, 'the journal write of the send to reach its fdatasync');
      await settle();
      assert.equal(answered, false, 'no answer while the fdatasync is pending');
      assert.equal(got.length, 0, 'no push of a message that is not durable yet');
      gate = false;
      held.shift()!();
      const sent = await sending;
      assert.equal(sent.state, 'pushed');

      gate = true;
      let recorded = false;
      const acking = hub
        .receipt({ identity: 'bob', session: 'bob-1', node: 'n' }, sent.message_id, 'ack')
        .then((r) => ((recorded = true), r));
      await waitFor(() => held.length > 0, 5000, 'the ack to reach its fdatasync');
      await settle();
      assert.equal(recorded, false, 'an ack is not confirmed before it is durable');
      gate = false;
      for (const release of held.splice(0)) release();
      assert.equal((await acking).recorded, true);
    } finally {
      gate = false;
      for (const release of held.splice(0)) release();
      proto.datasync = datasync;
      await hub.close();
    }
  });
});

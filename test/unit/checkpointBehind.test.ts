// A checkpoint is written behind the commits: while its document is being written (held here,
// mid-write, for as long as the test likes), sends and receipts are acknowledged, and a store
// copied from the disk at any moment after opens with every one of them exactly once.
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { nodeFs, type StoreFile, type StoreFs } from '../../extension/hub/store/storeFs';
import { tempDir } from '../helpers/hubProcess';
import { waitFor } from '../helpers/wait';

/** nodeFs, except that writes to a checkpoint being written wait for `release` while `hold` is set. */
function gatedFs() {
  const gate = { hold: false, held: 0, waiting: [] as (() => void)[], checkpoints: 0, placed: 0 };
  const release = () => {
    gate.hold = false;
    for (const go of gate.waiting.splice(0)) go();
  };
  const fs: StoreFs = {
    ...nodeFs,
    async rename(from, to) {
      await nodeFs.rename(from, to);
      if (to.endsWith('state.json')) gate.placed++;
    },
    async open(path, mode) {
      const file = await nodeFs.open(path, mode);
      if (!/state\.json\.\d+\.tmp$/.test(path)) return file;
      gate.checkpoints++;
      const held: StoreFile = {
        ...file,
        size: () => file.size(),
        read: (...a) => file.read(...a),
        truncate: (n) => file.truncate(n),
        sync: () => file.sync(),
        datasync: () => file.datasync(),
        close: () => file.close(),
        write: async (...a) => {
          if (gate.hold) {
            gate.held++;
            await new Promise<void>((go) => gate.waiting.push(go));
          }
          return file.write(...a);
        },
      };
      return held;
    },
  };
  return { fs, gate, release };
}

const alice = { identity: 'alice', session: 'a-1', node: 'n' };
const bob = { identity: 'bob', session: 'b-1', node: 'n' };

describe('a checkpoint written behind the commits', () => {
  it(
    'sends and receipts are acknowledged while its document is held mid-write, and a copy of the disk has each once',
    { timeout: 60_000 },
    async () => {
      const { fs, gate, release } = gatedFs();
      const storeDir = tempDir('behind-store');
      const hub = new Hub({
        workspace: tempDir('behind-ws'),
        storeDir,
        node: 'n',
        tickMs: 0,
        store: { fs, minCheckpointBytes: 1_500_000 },
      });
      await hub.start();
      try {
        await hub.remember('alice');
        await hub.remember('bob');
        // Open mail past the writer's first megabyte: it is held with the last of it not yet written.
        const early: string[] = [];
        gate.hold = true;
        for (let i = 0; gate.held === 0; i++) {
          assert.ok(i < 200, 'a checkpoint started');
          early.push((await hub.send(alice, { to: ['bob'], body: `early ${i} `.padEnd(40_000, '.') })).message_id);
        }
        // The document is half written and waits; commits go on, changing messages it has yet to write.
        const during: string[] = [];
        for (let i = 0; i < 30; i++)
          during.push((await hub.send(alice, { to: ['bob'], body: `during ${i}`, insist: true })).message_id);
        const acked = early.slice(-8, -1);
        const read = early.slice(-12, -8);
        for (const id of acked) await hub.receipt(bob, id, 'ack');
        for (const id of read) await hub.receipt(bob, id, 'read');
        assert.ok(gate.waiting.length > 0, 'the checkpoint is still held');
        const whileHeld = tempDir('behind-copy-held');
        cpSync(storeDir, whileHeld, { recursive: true });

        release();
        await waitFor(() => gate.waiting.length === 0 && gate.held > 0, 10_000, 'the checkpoint to go on');
        await waitFor(() => gate.placed > 0, 10_000, 'the checkpoint in place');
        const afterwards = tempDir('behind-copy-after');
        cpSync(storeDir, afterwards, { recursive: true });
        // The document is the hot set as of its snapshot: the messages sent after it are in the journal only.
        const document = readFileSync(join(afterwards, 'state.json'), 'utf8');
        assert.deepEqual(
          during.filter((id) => document.includes(id)),
          [],
          'no message sent after the snapshot is in its document',
        );
        assert.ok(document.includes(early[0]), 'a message open at the snapshot is');

        for (const [what, dir] of [
          ['while the checkpoint was held', whileHeld],
          ['once it was written', afterwards],
        ]) {
          const copy = new Hub({ workspace: tempDir('behind-ws2'), storeDir: dir, node: 'n', tickMs: 0 });
          await copy.start();
          try {
            for (const id of [...early, ...during]) {
              const view = await copy.lookup(id);
              assert.ok(view, `${what}: ${id} is there`);
              const kinds = view.deliveries[0].receipts.map((r) => r.kind);
              const want = acked.includes(id) ? ['ack'] : read.includes(id) ? ['read'] : [];
              assert.deepEqual(
                kinds.filter((k) => k === 'ack' || k === 'read'),
                want,
                `${what}: ${id} has each receipt once`,
              );
            }
          } finally {
            await copy.close();
          }
        }
      } finally {
        release();
        await hub.close();
      }
    },
  );
});

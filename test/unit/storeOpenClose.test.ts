// The store's two ends: a folder it creates is durable by name, not only by its files' contents,
// and closing it finishes what is queued, whatever was committed while it closed.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Store } from '../../extension/hub/store/store';
import { nodeFs, type StoreFs } from '../../extension/hub/store/storeFs';
import { tempDir } from '../helpers/hubProcess';
import { storedMessage } from '../helpers/storedMessage';

const opts = { idempotencyWindowMs: 60_000 };

const message = (i: number) => storedMessage(i);

/** The real file system, noting each directory fsync'd through it. */
function noting(): { fs: StoreFs; synced: string[] } {
  const synced: string[] = [];
  return {
    synced,
    fs: { ...nodeFs, syncDir: async (path) => (await nodeFs.syncDir(path), void synced.push(resolve(path))) },
  };
}

/** In a worker thread: a close that spins on the microtask queue starves every timer of its own thread, not the test's. */
async function closeWithCommitQueuedDuringIt(dir: string): Promise<void> {
  const store = await Store.open(dir, 'n', opts);
  // A sender's next send, made the moment its first is acknowledged: queued while close waits.
  const second = store
    .commit([{ type: 'sent', message: message(1) }])
    .then(() => store.commit([{ type: 'sent', message: message(2) }]));
  const closing = store.close(); // writes the first, and waits for it
  await Promise.all([second, closing]);
  const again = await Store.open(dir, 'n', opts);
  parentPort!.postMessage(Object.keys(again.state.hot).length);
}

if (!isMainThread) {
  void closeWithCommitQueuedDuringIt(workerData as string);
} else {
  describe('store open and close', () => {
    it('a store folder it creates, and each missing parent, is made durable by an fsync of its parent', async () => {
      const base = tempDir('store-mkdir');
      const dir = join(base, 'a', 'b', 'store');
      const { fs, synced } = noting();
      await (await Store.open(dir, 'n', { ...opts, fs })).close();
      for (const parent of [base, join(base, 'a'), join(base, 'a', 'b')]) {
        assert.ok(
          synced.includes(resolve(parent)),
          `${parent} fsync'd after the folder in it was made (synced: ${synced.join(', ')})`,
        );
      }

      const existing = join(tempDir('store-mkdir-existing'), 'store');
      mkdirSync(existing, { mode: 0o700 });
      const { fs: fs2, synced: again } = noting();
      await (await Store.open(existing, 'n', { ...opts, fs: fs2 })).close();
      assert.ok(
        !again.includes(resolve(existing, '..')),
        'a folder that was there already needs no fsync of its parent',
      );
    });

    it('close finishes a commit queued while it waits, within a bounded time', async () => {
      const dir = tempDir('store-close-queued');
      const worker = new Worker(__filename, { workerData: dir });
      try {
        const open = await new Promise<number | 'timeout'>((done, fail) => {
          const timer = setTimeout(() => done('timeout'), 10_000);
          worker.once('message', (n: number) => (clearTimeout(timer), done(n)));
          worker.once('error', (e) => (clearTimeout(timer), fail(e)));
        });
        assert.equal(open, 2, 'close resolved, and both commits were stored');
      } finally {
        await worker.terminate();
      }
    });
  });
}

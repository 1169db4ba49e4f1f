// The store's two ends: a folder it creates is durable by name, not only by its files' contents,
// and closing it finishes what is queued, whatever was committed while it closed.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Message } from '../../extension/hub/bus/model';
import { Store } from '../../extension/hub/store/store';
import { tempDir } from '../helpers/hubProcess';

const opts = { idempotencyWindowMs: 60_000 };

function message(i: number): Message {
  return {
    id: `01JD3V7W2K8Q5X9Y4Z${String(i).padStart(8, '0')}`, seq: i, from: 'alice', address: ['bob'], recipients: ['bob'], thread: 't',
    body: `message ${i}`, attachments: [], requiresAck: true, slaMs: 60_000, ttlMs: 3_600_000, sentAt: Date.now(), sentBySession: 's', node: 'n',
  };
}

/**
 * Directories fsync'd while `work` runs: the store opens a directory read-only and syncs that
 * handle (durableJsonFile.ts fsyncDir). The store's code reads `open` off the module at each call.
 */
async function dirsSynced(work: () => Promise<void>): Promise<string[]> {
  const fs = require('node:fs/promises') as typeof import('node:fs/promises');
  const open = fs.open;
  const synced: string[] = [];
  fs.open = (async (path: string, flags?: string | number, mode?: number) => {
    const fh = await open(path, flags, mode);
    if (flags === 'r' && (await fh.stat()).isDirectory()) {
      const sync = fh.sync.bind(fh);
      fh.sync = async () => {
        await sync();
        synced.push(resolve(String(path)));
      };
    }
    return fh;
  }) as typeof fs.open;
  try {
    await work();
  } finally {
    fs.open = open;
  }
  return synced;
}

/** In a worker thread: a close that spins on the microtask queue starves every timer of its own thread, not the test's. */
async function closeWithCommitQueuedDuringIt(dir: string): Promise<void> {
  const store = await Store.open(dir, 'n', opts);
  // A sender's next send, made the moment its first is acknowledged: queued while close waits.
  const second = store.commit([{ type: 'sent', message: message(1) }]).then(() => store.commit([{ type: 'sent', message: message(2) }]));
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
      const synced = await dirsSynced(async () => {
        await (await Store.open(dir, 'n', opts)).close();
      });
      for (const parent of [base, join(base, 'a'), join(base, 'a', 'b')]) {
        assert.ok(synced.includes(resolve(parent)), `${parent} fsync'd after the folder in it was made (synced: ${synced.join(', ')})`);
      }

      const existing = join(tempDir('store-mkdir-existing'), 'store');
      mkdirSync(existing, { mode: 0o700 });
      const again = await dirsSynced(async () => {
        await (await Store.open(existing, 'n', opts)).close();
      });
      assert.ok(!again.includes(resolve(existing, '..')), 'a folder that was there already needs no fsync of its parent');
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

// The editor's first snapshot reads a bounded window of history, counted (not timed): the open
// handoffs and at most SETTLED_CAP settled ones, the same on a store with 10× the history; and the
// handoffs it listed as finished are listed again by the next hub, after a restart moved them all
// into history (a newcomer saw 3 become 1).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { Store } from '../../extension/hub/store/store';
import { nodeFs, type StoreFs } from '../../extension/hub/store/storeFs';
import { SETTLED_CAP, type Snapshot } from '../../extension/protocol/views';
import { tempDir } from '../helpers/hubProcess';
import { doneReceipt, storedMessage } from '../helpers/storedMessage';

const OPEN = 20;
const store = { segmentBytes: 16 * 1024, minCheckpointBytes: 8 * 1024 };

/** `settled` handoffs sent and done, then `OPEN` still open, checkpointed: the settled ones in history. */
async function filled(settled: number): Promise<string> {
  const dir = tempDir('first-ledger');
  const s = await Store.open(dir, 'n', { idempotencyWindowMs: 60_000, ...store });
  for (let i = 1; i <= settled; i += 100) {
    const ms = Array.from({ length: Math.min(100, settled - i + 1) }, (_, k) =>
      storedMessage(i + k, { body: `settled handoff ${i + k}`.padEnd(200, '.') }),
    );
    await Promise.all(ms.map((m) => s.commit([{ type: 'sent', message: m }, doneReceipt(m)])));
  }
  for (let i = settled + 1; i <= settled + OPEN; i++)
    await s.commit([{ type: 'sent', message: storedMessage(i, { body: `open handoff ${i}` }) }]);
  await s.close();
  return dir;
}

/**
 * A file system that counts the reads of history's message lines (its indexes are not counted, nor
 * the one-byte read that checks a sealed segment's data is all there at its first use).
 */
function counting(dir: string): { fs: StoreFs; lines: () => number } {
  let lines = 0;
  const data = (path: string) => path.startsWith(join(dir, 'history')) && path.endsWith('.ndjson');
  const fs: StoreFs = {
    ...nodeFs,
    open: async (path, mode) => {
      const f = await nodeFs.open(path, mode);
      if (!data(path)) return f;
      return { ...f, read: (...a) => (lines++, f.read(...a)) };
    },
    openReader: (path) => {
      const r = nodeFs.openReader(path);
      if (!data(path)) return r;
      return { ...r, read: (...a) => (a[2] > 1 && lines++, r.read(...a)) };
    },
  };
  return { fs, lines: () => lines };
}

async function firstSnapshot(dir: string): Promise<{ snapshot: Snapshot; lines: number; archived: number }> {
  const c = counting(dir);
  const hub = new Hub({ workspace: dir, storeDir: dir, node: 'n', tickMs: 0, store: { ...store, fs: c.fs } });
  await hub.start();
  try {
    const before = c.lines();
    const snapshot = await hub.fullSnapshot();
    const lines = c.lines() - before;
    await hub.fullSnapshot();
    assert.equal(c.lines() - before, lines, 'a later snapshot reads no history again');
    return { snapshot, lines, archived: snapshot.store.archived };
  } finally {
    await hub.close();
  }
}

describe("the editor's first ledger", () => {
  it('reads at most SETTLED_CAP lines of history, however long the history is', async () => {
    const small = await firstSnapshot(await filled(300));
    const large = await firstSnapshot(await filled(3000));
    assert.equal(small.archived, 300);
    assert.equal(large.archived, 3000);
    for (const r of [small, large]) {
      assert.equal(r.snapshot.messages.length, OPEN, 'every open handoff');
      assert.equal(r.snapshot.settled?.length, SETTLED_CAP, 'the settled window, full');
      assert.ok(r.lines <= SETTLED_CAP, `history lines read: ${r.lines}`);
    }
    assert.equal(large.lines, small.lines, 'the same reads on ten times the history');
    console.log(`# first snapshot: ${small.lines} / ${large.lines} history lines read on 300 / 3000 settled`);
    // The newest settled ones, newest first.
    assert.deepEqual(
      large.snapshot.settled!.map((e) => e.seq),
      Array.from({ length: SETTLED_CAP }, (_, k) => 3000 - k),
    );
    assert.ok(large.snapshot.settled!.every((e) => !e.pending && e.recipients[0].state === 'done'));
  });

  it('lists the finished handoffs after a restart as before it', async () => {
    const dir = tempDir('finished-restart');
    const where = { workspace: dir, storeDir: join(dir, 'store'), node: 'n', tickMs: 0 };
    const alice = { identity: 'alice', session: 'a', node: 'n' };
    const bob = { identity: 'bob', session: 'b', node: 'n' };
    const listed = (s: Snapshot) => [...s.messages, ...(s.settled ?? [])].map((e) => e.id).sort();
    let hub = new Hub(where);
    await hub.start();
    await hub.remember('bob');
    const sent = [];
    for (const body of ['one', 'two', 'three'])
      sent.push((await hub.send(alice, { to: ['bob'], body: `finished ${body}` })).message_id);
    for (const id of sent.slice(0, 2)) await hub.receipt(bob, id, 'result', 'done');
    const before = listed(await hub.fullSnapshot());
    assert.deepEqual(before, [...sent].sort(), 'two finished, one open, before');
    await hub.close();
    hub = new Hub(where);
    await hub.start();
    try {
      const after = await hub.fullSnapshot();
      assert.equal(after.messages.length, 1, 'the restart moved the finished ones into history');
      assert.deepEqual(listed(after), before, 'the same handoffs listed after the restart');
    } finally {
      await hub.close();
    }
  });

  it('lists a handoff a checkpoint moves into history while the editor is open, without reading history again', async () => {
    const dir = tempDir('finished-checkpoint');
    const c = counting(join(dir, 'store'));
    const hub = new Hub({
      workspace: dir,
      storeDir: join(dir, 'store'),
      node: 'n',
      tickMs: 0,
      store: { fs: c.fs, minCheckpointBytes: 2048 },
    });
    await hub.start();
    try {
      await hub.remember('bob');
      assert.deepEqual((await hub.fullSnapshot()).settled, [], 'nothing settled yet');
      const lines = c.lines();
      const alice = { identity: 'alice', session: 'a', node: 'n' };
      const bob = { identity: 'bob', session: 'b', node: 'n' };
      const sent: string[] = [];
      for (let i = 0; i < 30; i++) {
        const id = (await hub.send(alice, { to: ['bob'], body: `finished ${i} `.padEnd(400, '.') })).message_id;
        await hub.receipt(bob, id, 'result', 'done');
        sent.push(id);
      }
      const s = hub.snapshot();
      assert.ok(s.messages.length < 30, `checkpoints moved some into history (${s.messages.length} still hot)`);
      assert.deepEqual([...s.messages, ...s.settled!].map((e) => e.id).sort(), [...sent].sort(), 'every one listed');
      assert.equal(c.lines(), lines, 'no history line read for them');
    } finally {
      await hub.close();
    }
  });
});

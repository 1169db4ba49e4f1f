// History off the start path (store/history.ts): settled handoffs go into segments of bounded size,
// each sealed with an index on disk; a restart reads the headers and the segment being written, an
// old handoff is found by id, a search reads only the lines its terms point at, and the archive
// an earlier version wrote is indexed in place, once, and read from there.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Message } from '../../extension/hub/bus/model';
import { Store } from '../../extension/hub/store/store';
import { tempDir } from '../helpers/hubProcess';
import { doneReceipt, storedMessage } from '../helpers/storedMessage';

const opts = { idempotencyWindowMs: 60_000, segmentBytes: 16 * 1024, minCheckpointBytes: 8 * 1024 };

const message = (i: number, from = 'alice', to = 'bob') =>
  storedMessage(i, {
    from,
    to,
    thread: `thread-${i % 7}`,
    body: `message ${i} about the ${i % 10 === 3 ? 'parser' : 'lexer'} `.padEnd(300, '.'),
    sentAt: 1_700_000_000_000 + i,
  });

const done = (m: Message) => doneReceipt(m);

/** `n` handoffs sent and done, in batches, each batch checkpointed into history. */
async function settle(dir: string, n: number, of = (i: number) => message(i)): Promise<void> {
  const store = await Store.open(dir, 'n', opts);
  for (let i = 1; i <= n; i += 50) {
    const ms = Array.from({ length: Math.min(50, n - i + 1) }, (_, k) => of(i + k));
    await Promise.all(ms.map((m) => store.commit([{ type: 'sent', message: m }, done(m)])));
  }
  await store.close();
}

const files = (dir: string, ext: string) => readdirSync(join(dir, 'history')).filter((f) => f.endsWith(ext));

describe('history', () => {
  it('segments are sealed with their indexes; after a restart every old handoff is found by id, and the recent window without a read', async () => {
    const dir = tempDir('history-segments');
    await settle(dir, 600);
    assert.ok(files(dir, '.idx').length >= 5, `sealed: ${files(dir, '.idx').join(' ')}`);
    const store = await Store.open(dir, 'n', opts);
    try {
      assert.equal(store.archivedCount, 600);
      for (const i of [1, 2, 77, 300, 599, 600]) {
        const got = await store.archived(message(i).id);
        assert.equal(got?.message.body, message(i).body, `handoff ${i}`);
        assert.equal(await store.isArchived(message(i).id), true);
      }
      assert.equal(await store.archived(message(601).id), undefined);
      assert.equal(await store.isArchived(message(601).id), false);
      assert.equal(store.isRecentlyArchived(message(600).id), true, 'the newest: in the window');
      assert.equal(store.isRecentlyArchived(message(1).id), false, 'the oldest: only by a read');
    } finally {
      await store.close();
    }
  });

  it('a search reads what its terms point at: by word, sender, recipient, thread, state and time, newest first, only what the viewer may see', async () => {
    const dir = tempDir('history-search');
    await settle(dir, 400, (i) => (i % 2 ? message(i, 'alice', 'bob') : message(i, 'carol', 'dave')));
    const store = await Store.open(dir, 'n', opts);
    try {
      const search = (q: Parameters<typeof store.history.search>[0]) =>
        store.history.search(q).then((r) => r.map((a) => a.message.seq));
      const parser = Array.from({ length: 400 }, (_, k) => 400 - k).filter((i) => i % 10 === 3);
      assert.deepEqual(await search({ text: 'Parser', limit: 100 }), parser, 'every one with the word, newest first');
      assert.deepEqual(await search({ text: 'parser', limit: 5 }), parser.slice(0, 5));
      const bobs = { identity: 'bob' };
      assert.deepEqual(
        await search({ text: 'parser', viewer: bobs, limit: 100 }),
        parser.filter((i) => i % 2),
        "bob never sees carol's mail to dave",
      );
      assert.deepEqual(await search({ from: 'carol', viewer: bobs, limit: 100 }), []);
      assert.deepEqual(
        await search({
          thread: 'thread-3',
          to: 'dave',
          since: 1_700_000_000_100,
          until: 1_700_000_000_200,
          limit: 100,
        }),
        Array.from({ length: 100 }, (_, k) => 199 - k).filter((i) => i % 7 === 3 && i % 2 === 0),
      );
      assert.equal((await search({ state: 'done', limit: 1000 })).length, 400);
      assert.deepEqual(await search({ state: 'pushed', limit: 10 }), []);
    } finally {
      await store.close();
    }
  });

  it("an earlier version's archive.ndjson is indexed in place at the first start, left as it was, and not read again", async () => {
    // The lines an earlier version wrote: the same as a segment's, in one file that only grew.
    const old = tempDir('history-legacy-old');
    await settle(old, 300);
    const before = Buffer.concat(
      files(old, '.ndjson')
        .sort()
        .map((f) => readFileSync(join(old, 'history', f))),
    );
    const dir = tempDir('history-legacy');
    writeFileSync(join(dir, 'archive.ndjson'), before, { mode: 0o600 });
    const first = await Store.open(dir, 'n', opts);
    const ranges = files(dir, '.idx');
    assert.ok(ranges.length >= 4, `legacy ranges: ${ranges.join(' ')}`);
    assert.equal(first.archivedCount, 300);
    assert.equal((await first.archived(message(5).id))?.message.body, message(5).body);
    await first.close();
    assert.deepEqual(readFileSync(join(dir, 'archive.ndjson')), before, 'the old archive is left byte for byte');
    // Damage in it now is not read at start: the indexes cover it, and a read of that line says so.
    writeFileSync(
      join(dir, 'archive.ndjson'),
      Buffer.concat([before.subarray(0, 100), Buffer.from('XXXX'), before.subarray(104)]),
    );
    const again = await Store.open(dir, 'n', opts);
    try {
      assert.deepEqual(files(dir, '.idx'), ranges, 'indexed once');
      assert.equal((await again.archived(message(300).id))?.message.body, message(300).body);
      await assert.rejects(
        again.archived(message(1).id),
        /archive\.ndjson is damaged \(at byte 0: its checksum does not match\)/,
      );
    } finally {
      await again.close();
    }
  });

  it('a sealed index cut short: the catalog lists it, so the first lookup in it stops with damage naming the file; not listed, the open stops; nothing is changed', async () => {
    const dir = tempDir('history-damaged-index');
    await settle(dir, 200);
    const idx = join(dir, 'history', files(dir, '.idx')[0]);
    truncateSync(idx, 100);
    const named = (e: Error) => e.name === 'StoreDamage' && e.message.includes(idx);
    const store = await Store.open(dir, 'n', opts);
    try {
      await assert.rejects(store.archived(message(1).id), named);
      await assert.rejects(store.history.search({ text: 'lexer', limit: 1000 }), named);
    } finally {
      await store.close();
    }
    unlinkSync(join(dir, 'history', 'catalog'));
    await assert.rejects(Store.open(dir, 'n', opts), named);
    assert.equal(readFileSync(idx).length, 100);
  });
});

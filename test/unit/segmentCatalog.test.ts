// The catalog of sealed history segments (store/segmentCatalog.ts): a start reads one catalog file,
// not every index, whatever the number of segments; a catalog that is missing, lags the folder or
// is damaged is caught up or rebuilt from the indexes and no handoff is lost; segments retention
// removes leave the catalog.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import type { Message } from '../../extension/hub/bus/model';
import { History } from '../../extension/hub/store/history';
import type { CatalogOpen } from '../../extension/hub/store/segmentCatalog';
import { Store } from '../../extension/hub/store/store';
import { nodeFs, type StoreFs } from '../../extension/hub/store/storeFs';
import { tempDir } from '../helpers/hubProcess';
import { doneReceipt, storedMessage } from '../helpers/storedMessage';

const segmentBytes = 16 * 1024;
const opts = { idempotencyWindowMs: 60_000, segmentBytes, minCheckpointBytes: 8 * 1024 };
const message = (i: number) =>
  storedMessage(i, { body: `message ${i} `.padEnd(300, '.'), sentAt: 1_700_000_000_000 + i });

async function settle(dir: string, n: number): Promise<void> {
  const store = await Store.open(dir, 'n', opts);
  for (let i = 1; i <= n; i += 50) {
    const ms = Array.from({ length: Math.min(50, n - i + 1) }, (_, k) => message(i + k));
    await Promise.all(ms.map((m: Message) => store.commit([{ type: 'sent', message: m }, doneReceipt(m)])));
  }
  await store.close();
}

/** The store's file system, counting the files opened in history/ (either way of opening). */
function counting(): { fs: StoreFs; opened: string[] } {
  const opened: string[] = [];
  const note = (path: string) => path.includes('/history/') && opened.push(path.slice(path.indexOf('/history/') + 9));
  const fs: StoreFs = {
    ...nodeFs,
    open: (path, mode) => (note(path), nodeFs.open(path, mode)),
    openReader: (path) => (note(path), nodeFs.openReader(path)),
  };
  return { fs, opened };
}

/** Opens the history alone; every handoff 1..n looked up by id: how many were not found. */
async function lost(dir: string, n: number, onCatalog?: (o: CatalogOpen) => void): Promise<number> {
  const h = await History.open(dir, { fs: nodeFs, segmentBytes, onCatalog });
  try {
    let missing = 0;
    for (let i = 1; i <= n; i++) if ((await h.get(message(i).id))?.message.body !== message(i).body) missing++;
    return missing;
  } finally {
    await h.close();
  }
}

const catalog = (dir: string) => join(dir, 'history', 'catalog');
const indexes = (dir: string) => readdirSync(join(dir, 'history')).filter((f) => f.endsWith('.idx'));

describe('the history catalog', () => {
  it('a start opens the same few files in history/ for 7 segments and for 45: the catalog, the segment being written, the last sealed one (the recent window)', async () => {
    const small = tempDir('catalog-small');
    const big = tempDir('catalog-big');
    await settle(small, 200);
    await settle(big, 1200);
    const counts = [];
    for (const dir of [small, big]) {
      const { fs, opened } = counting();
      const h = await History.open(dir, { fs, segmentBytes });
      await h.close();
      counts.push({ segments: indexes(dir).length, opened });
    }
    assert.ok(counts[0].segments <= 10 && counts[1].segments >= 40, JSON.stringify(counts.map((c) => c.segments)));
    assert.equal(counts[1].opened.length, counts[0].opened.length, JSON.stringify(counts));
    assert.ok(new Set(counts[1].opened).size <= 4, counts[1].opened.join(' '));
    assert.ok(counts[1].opened.includes('catalog'));
  });

  it('missing: rebuilt from the indexes, 0 handoffs lost, and written back', async () => {
    const dir = tempDir('catalog-missing');
    await settle(dir, 600);
    unlinkSync(catalog(dir));
    const said: CatalogOpen[] = [];
    assert.equal(await lost(dir, 600, (o) => said.push(o)), 0);
    assert.equal(said[0].rebuilt, 'missing');
    assert.equal(said[0].added, indexes(dir).length);
    const again: CatalogOpen[] = [];
    assert.equal(await lost(dir, 600, (o) => again.push(o)), 0);
    assert.deepEqual(
      again[0],
      { read: indexes(dir).length, added: 0, dropped: 0 },
      'the rebuilt one is used next time',
    );
  });

  it('lagging by the segment sealed last (a crash before its write): caught up from that index alone, 0 lost', async () => {
    const dir = tempDir('catalog-lagging');
    await settle(dir, 600);
    const buf = readFileSync(catalog(dir));
    const rows = buf.readUInt32LE(8);
    const lagging = Buffer.from(buf.subarray(0, buf.length - 132));
    lagging.writeUInt32LE(rows - 1, 8);
    lagging.writeUInt32LE(crc32(lagging.subarray(16)), 12);
    writeFileSync(catalog(dir), lagging);
    const cut = join(dir, 'history', '.catalog.99999.tmp'); // the catalog write the crash cut short
    writeFileSync(cut, buf.subarray(0, 100));
    const said: CatalogOpen[] = [];
    assert.equal(await lost(dir, 600, (o) => said.push(o)), 0);
    assert.deepEqual(said[0], { read: rows - 1, added: 1, dropped: 0 });
    assert.equal(existsSync(cut), false, 'its temp file is removed');
  });

  it('damaged (a byte changed): rebuilt from the indexes, 0 lost', async () => {
    const dir = tempDir('catalog-damaged');
    await settle(dir, 600);
    const buf = readFileSync(catalog(dir));
    buf[16 + 132 * 2] ^= 1; // a segment number: its row still parses, only the catalog's checksum tells
    writeFileSync(catalog(dir), buf);
    const said: CatalogOpen[] = [];
    assert.equal(await lost(dir, 600, (o) => said.push(o)), 0);
    assert.equal(said[0].rebuilt, 'its checksum does not match');
  });

  it('segments removed (retention): unlisted with remove(), then their files deleted; a crash between is caught up too', async () => {
    const dir = tempDir('catalog-remove');
    await settle(dir, 600);
    const h = await History.open(dir, { fs: nodeFs, segmentBytes });
    const first = h.catalog.list()[0];
    const gone = first.header.count;
    // What retention goes by: when the segment's handoffs were archived (here, settled one by one in order).
    assert.ok(first.header.firstAt > 0 && first.header.firstAt <= first.header.lastAt, JSON.stringify(first.header));
    assert.ok(first.header.lastAt <= h.catalog.list()[1].header.firstAt);
    await h.catalog.remove([first.n]);
    await h.close();
    const name = String(first.n).padStart(6, '0');
    const said: CatalogOpen[] = [];
    const kept = await History.open(dir, { fs: nodeFs, segmentBytes, onCatalog: (o) => said.push(o) });
    // Unlisted but not yet deleted (the crash between): read back as a segment sealed after the catalog.
    assert.equal(said[0].added, 1);
    await kept.catalog.remove([first.n]);
    await kept.close();
    rmSync(join(dir, 'history', `${name}.idx`));
    rmSync(join(dir, 'history', `${name}.ndjson`));
    assert.equal(await lost(dir, 600), gone, 'only the removed segment');
    // Deleted while still listed (a retention that deleted first): the entry is dropped at the start.
    const reopened = await History.open(dir, { fs: nodeFs, segmentBytes });
    const second = reopened.catalog.list()[0];
    await reopened.close();
    const n2 = String(second.n).padStart(6, '0');
    rmSync(join(dir, 'history', `${n2}.idx`));
    rmSync(join(dir, 'history', `${n2}.ndjson`));
    const after: CatalogOpen[] = [];
    assert.equal(await lost(dir, 600, (o) => after.push(o)), gone + second.header.count);
    assert.equal(after[0].dropped, 1);
  });
});

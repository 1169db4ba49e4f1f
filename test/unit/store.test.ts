// The store on a real disk: recovery from the journal, a torn tail, checkpoints that move settled
// messages to the archive, and a hot document that stays small.
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Message } from '../../extension/hub/bus/model';
import { frameLine } from '../../extension/hub/store/logLine';
import { Store } from '../../extension/hub/store/store';
import { tempDir } from '../helpers/hubProcess';
import { doneReceipt, storedMessage } from '../helpers/storedMessage';

const opts = { idempotencyWindowMs: 60_000, minCheckpointBytes: 64 * 1024 };

/** Where the journal's last line ends: after it, the file holds the zeros written ahead. */
function linesEnd(path: string): number {
  return readFileSync(path).lastIndexOf(0x0a) + 1;
}

/** Writes bytes at an offset, as a batch in flight does (not an append: the file runs on in zeros). */
function writeAt(path: string, at: number, bytes: string | Buffer): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, typeof bytes === 'string' ? Buffer.from(bytes) : bytes, 0, undefined, at);
  closeSync(fd);
}

const message = (i: number) => storedMessage(i, { body: `message ${i} `.padEnd(200, '.') });

const done = (m: Message) => doneReceipt(m);

describe('store', () => {
  it('recovers every committed event from the journal alone (no checkpoint yet) and cuts a torn tail', async () => {
    const dir = tempDir('store-recover');
    const store = await Store.open(dir, 'n', opts);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.commit([{ type: 'sent', message: message(i + 1) }])));
    // Simulate kill -9 mid-write: no close(), and half a line at the end of the journal.
    const journal = join(dir, 'journal.ndjson');
    assert.ok(statSync(journal).size > linesEnd(journal), 'the journal runs on in zeros written ahead');
    writeAt(journal, linesEnd(journal), '{"n":999,"e":[{"type":"sent","mess');
    const again = await Store.open(dir, 'n', opts);
    assert.equal(Object.keys(again.state.hot).length, 50);
    assert.equal(again.state.seq, 50);
    assert.ok(readFileSync(journal, 'utf8').endsWith('\n'), 'the torn tail was cut');
    await again.commit([{ type: 'sent', message: message(51) }]);
    const third = await Store.open(dir, 'n', opts);
    assert.equal(Object.keys(third.state.hot).length, 51, 'appends after the cut are readable');
  });

  it('a batch written while the one before it never reached the file (a hole): the cut keeps only what precedes the hole', async () => {
    const dir = tempDir('store-hole');
    const store = await Store.open(dir, 'n', opts);
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.commit([{ type: 'sent', message: message(i + 1) }])));
    const journal = join(dir, 'journal.ndjson');
    const acked = linesEnd(journal);
    // Batches overlap: a later batch (two records) was written at its offset, the one before it never was — kill -9.
    // Written while the hole's batch was not yet synced: its lines say so (synced up to the hole, not past it).
    const later = [22, 23]
      .map((n) => `${frameLine(JSON.stringify({ n, e: [{ type: 'sent', message: message(n) }] }), acked)}\n`)
      .join('');
    writeAt(journal, acked + 300, later);
    const again = await Store.open(dir, 'n', opts);
    assert.equal(Object.keys(again.state.hot).length, 20, 'the 20 acknowledged, nothing from behind the hole');
    assert.equal(statSync(journal).size, acked, 'cut at the hole');
    await again.commit([{ type: 'sent', message: message(24) }]);
    const third = await Store.open(dir, 'n', opts);
    assert.deepEqual(Object.keys(third.state.hot).length, 21, 'appends after the cut are readable');
  });

  it('the zeros written ahead survive a restart and the next batches overwrite them, with nothing read from them', async () => {
    const dir = tempDir('store-zeros');
    const journal = join(dir, 'journal.ndjson');
    const store = await Store.open(dir, 'n', opts);
    for (let i = 1; i <= 5; i++) await store.commit([{ type: 'sent', message: message(i) }]);
    const allocated = statSync(journal).size;
    assert.ok(
      allocated >= linesEnd(journal) + 64 * 1024,
      `${allocated} bytes on disk for ${linesEnd(journal)} of lines`,
    );
    const again = await Store.open(dir, 'n', opts); // kill -9: no close
    assert.equal(Object.keys(again.state.hot).length, 5);
    assert.equal(statSync(journal).size, allocated, 'a tail of zeros only is not cut');
    await again.commit([{ type: 'sent', message: message(6) }]);
    assert.equal(statSync(journal).size, allocated, 'the next batch went into the zeros');
    const third = await Store.open(dir, 'n', opts);
    assert.equal(Object.keys(third.state.hot).length, 6);
  });

  it('checkpoints move settled messages to the archive, where they can still be read', async () => {
    const dir = tempDir('store-archive');
    const store = await Store.open(dir, 'n', opts);
    const ms = Array.from({ length: 2000 }, (_, i) => message(i + 1));
    for (const m of ms) await store.commit([{ type: 'sent', message: m }, done(m)]);
    await store.commit([{ type: 'sent', message: message(5000) }]); // one stays open
    await store.close();
    const reopened = await Store.open(dir, 'n', opts);
    assert.deepEqual(Object.keys(reopened.state.hot), [message(5000).id]);
    assert.equal(reopened.archivedCount, 2000);
    const old = await reopened.archived(ms[1234].id);
    assert.equal(old?.message.body, ms[1234].body);
    assert.equal(old?.deliveries.bob.state, 'done');
    assert.ok(statSync(join(dir, 'state.json')).size < 20_000, 'the hot document holds only open messages');
    assert.equal(statSync(join(dir, 'journal.ndjson')).size, 0, 'a clean close leaves nothing to replay');
  });

  it('a message whose body a checkpoint holds is archived with its body when it settles later', async () => {
    const dir = tempDir('store-archive-paged');
    const first = await Store.open(dir, 'n', opts);
    const m = message(1);
    await first.commit([{ type: 'sent', message: m }]);
    await first.close();
    const store = await Store.open(dir, 'n', opts);
    assert.equal(typeof store.state.hot[m.id].message.body, 'number', 'its body left in the checkpoint');
    await store.commit([done(m)]);
    await store.close(); // settled: archived
    const again = await Store.open(dir, 'n', opts);
    assert.equal((await again.archived(m.id))?.message.body, m.body);
    await again.close();
  });

  it('a checkpoint happens while running once the journal outgrows the hot document', async () => {
    const dir = tempDir('store-checkpoint');
    const store = await Store.open(dir, 'n', opts);
    for (let i = 1; i <= 1000; i++) {
      const m = message(i);
      await store.commit([{ type: 'sent', message: m }, done(m)]);
    }
    assert.ok(
      linesEnd(join(dir, 'journal.ndjson')) < 2 * opts.minCheckpointBytes,
      'the journal was truncated by checkpoints',
    );
    assert.ok(store.archivedCount > 0);
  });

  it('a reopened checkpoint and archive keep name-keyed records free of Object.prototype', async () => {
    const dir = tempDir('store-dicts');
    const store = await Store.open(dir, 'n', opts);
    const names = ['toString', 'constructor', 'valueOf'];
    for (const name of names) await store.commit([{ type: 'identity', name, at: Date.now(), roles: [] }]);
    const open = { ...message(1), recipients: ['toString'], address: ['toString'] };
    const settled = { ...message(2), recipients: ['constructor'], address: ['constructor'] };
    await store.commit([
      { type: 'sent', message: open },
      { type: 'sent', message: settled },
      {
        type: 'receipt',
        id: settled.id,
        recipient: 'constructor',
        receipt: { kind: 'result', outcome: 'done', by: 'constructor', session: 's', node: 'n', at: Date.now() },
      },
    ]);
    await store.close(); // checkpoint + archive: the next open reads both back
    const again = await Store.open(dir, 'n', opts);
    assert.deepEqual(Object.keys(again.state.identities).sort(), [...names].sort());
    assert.equal((again.state.identities as Record<string, unknown>).hasOwnProperty, undefined, 'identities');
    assert.equal((again.state.hot as Record<string, unknown>).isPrototypeOf, undefined, 'hot');
    assert.equal((again.state.coverage as Record<string, unknown>).propertyIsEnumerable, undefined, 'coverage');
    assert.equal((again.state.idempotency as Record<string, unknown>).toLocaleString, undefined, 'idempotency');
    assert.equal(
      (again.state.hot[open.id].deliveries as Record<string, unknown>).constructor,
      undefined,
      "an open message's deliveries",
    );
    const archived = await again.archived(settled.id);
    assert.equal(archived?.deliveries['constructor' as string]?.state, 'done');
    assert.equal(
      (archived?.deliveries as Record<string, unknown>).toString,
      undefined,
      "an archived message's deliveries",
    );
  });
});

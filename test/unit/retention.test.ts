// Retention (store/retention.ts) on a fake clock: whole sealed segments go, oldest first, once the
// newest handoff in them settled more days ago than kept, or while history is over the bytes kept;
// never the segment being written. A drop a crash cut short is finished at the next start; a
// setting or drop record that is not as the hub wrote it is refused, and nothing is removed.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ulid } from 'ulid';
import { Store } from '../../extension/hub/store/store';
import { StoreDamage } from '../../extension/hub/store/storeDamage';
import { tempDir } from '../helpers/hubProcess';
import { doneReceipt, storedMessage } from '../helpers/storedMessage';

const DAY = 86_400_000;
const T0 = 1_700_000_000_000;
const opts = { idempotencyWindowMs: 60_000, segmentBytes: 16 * 1024, minCheckpointBytes: 8 * 1024 };
const message = (i: number) => storedMessage(i, { body: `message ${i} `.padEnd(300, '.'), sentAt: T0 + i });

/** `n` handoffs sent and done, 50 a day: each day's closing checkpoint archives them at that day's time. */
async function settle(dir: string, n: number): Promise<void> {
  const clock = { t: T0 };
  for (let i = 1; i <= n; i += 50) {
    const store = await Store.open(dir, 'n', { ...opts, now: () => clock.t });
    const ms = Array.from({ length: Math.min(50, n - i + 1) }, (_, k) => message(i + k));
    await Promise.all(ms.map((m) => store.commit([{ type: 'sent', message: m }, doneReceipt(m, clock.t)])));
    await store.close();
    clock.t += DAY;
  }
}

const history = (dir: string) => readdirSync(join(dir, 'history'));
const sealed = (dir: string) => history(dir).filter((f) => f.endsWith('.idx'));
const bytes = (dir: string) =>
  history(dir)
    .filter((f) => /^\d{6}\.(idx|ndjson)$/.test(f))
    .reduce((n, f) => n + statSync(join(dir, 'history', f)).size, 0);

async function opened(dir: string, now: number, lines: string[] = []) {
  return Store.open(dir, 'n', { ...opts, now: () => now, log: (l) => lines.push(l) });
}

describe('retention', () => {
  it('on a fake clock: segments settled more days ago than kept go, oldest first; the rest, and the one being written, stay', async () => {
    const dir = tempDir('retention-days');
    await settle(dir, 600);
    const before = sealed(dir);
    assert.ok(before.length >= 6, `sealed: ${before.join(' ')}`);
    const clock = { t: T0 + 11 * DAY };
    const lines: string[] = [];
    const store = await Store.open(dir, 'n', { ...opts, now: () => clock.t, log: (l) => lines.push(l) });
    try {
      const headers = () => store.history.segments.map((s) => s.header);
      const all = headers();
      await store.retention.set({ keepDays: 5 });
      const cutoff = clock.t - 5 * DAY;
      const kept = headers();
      const gone = all.slice(0, all.length - kept.length);
      assert.ok(gone.length > 0 && kept.length > 0, `dropped ${gone.length}, kept ${kept.length}`);
      assert.ok(
        gone.every((h) => h.lastAt < cutoff),
        'only segments settled before the cutoff',
      );
      assert.ok(kept[0].lastAt >= cutoff, 'the oldest kept is within the days kept');
      assert.deepEqual(kept, all.slice(gone.length), 'the oldest went');
      assert.equal(await store.archived(message(1).id), undefined);
      assert.equal((await store.archived(message(600).id))?.message.id, message(600).id);
      // get_message's "removed by retention": an id made before the newest settlement dropped, not one made after
      assert.equal(store.retention.mayHaveDropped(ulid(store.retention.dropped.settledBefore)), true);
      assert.equal(store.retention.mayHaveDropped(ulid(clock.t)), false);
      assert.equal(lines.filter((l) => l.startsWith('history: dropped segment ')).length, gone.length);
      assert.match(lines[0], /^history: dropped segment 1 \(\d+ handoffs, settled before 2023-11-1\dT/);

      clock.t += 100 * DAY; // long after: every sealed segment goes, the one being written stays
      const active = store.history.activeBytes;
      await store.retention.run();
      assert.deepEqual(sealed(dir), []);
      assert.ok(active > 0 && store.history.activeBytes === active);
      assert.ok(store.archivedCount > 0, 'the segment being written is never dropped');
      assert.equal((await store.archived(message(600).id))?.message.id, message(600).id);
    } finally {
      await store.close();
    }
    assert.equal(sealed(dir).length, 0);
  });

  it('a size cap drops the oldest segments until history fits, and a cap below one segment keeps only the one being written', async () => {
    const dir = tempDir('retention-size');
    await settle(dir, 600);
    const names = sealed(dir);
    const size = (f: string) => statSync(join(dir, 'history', f)).size;
    const unit = (idx: string) => size(idx) + size(idx.replace('.idx', '.ndjson'));
    const store = await opened(dir, T0);
    try {
      // A byte short of the segment being written and the newest two sealed ones: one sealed stays.
      const active = store.history.activeBytes;
      assert.ok(active > 0);
      const cap = active + unit(names.at(-1)!) + unit(names.at(-2)!) - 1;
      await store.retention.set({ keepGiB: cap / 2 ** 30 });
      assert.ok(bytes(dir) <= cap, `${bytes(dir)} bytes kept, cap ${cap}`);
      assert.deepEqual(sealed(dir), names.slice(-1), 'the newest stays, the oldest went');
      assert.equal(store.retention.dropped.segments, names.length - 1);
      await store.retention.set({ keepGiB: 1 / 2 ** 30 });
      assert.deepEqual(sealed(dir), []);
      assert.ok(store.archivedCount > 0);
    } finally {
      await store.close();
    }
  });

  it('a read of history (an export page) across a drop skips the dropped segment and counts it, never a raw ENOENT', async () => {
    const dir = tempDir('retention-mid-read');
    await settle(dir, 600);
    const store = await opened(dir, T0 + 1000 * DAY);
    try {
      const total = store.history.segments.reduce((n, s) => n + s.header.count, 0);
      let removed = 0;
      let read = 0;
      const lines = store.history.lines({ n: 0, offset: 0 }, undefined, (k) => (removed += k));
      for await (const _ of lines) {
        if (read++ === 0) await store.retention.set({ keepDays: 1 }); // mid-read: every sealed segment goes
      }
      assert.ok(removed > 0, 'the dropped handoffs are counted');
      assert.ok(read + removed >= total, `read ${read} + removed ${removed} of ${total}`);
    } finally {
      await store.close();
    }
  });

  it('keeps everything by default and when told to keep everything again', async () => {
    const dir = tempDir('retention-default');
    await settle(dir, 300);
    const names = sealed(dir);
    const store = await opened(dir, T0 + 10_000 * DAY);
    try {
      assert.deepEqual(sealed(dir), names);
      await store.retention.set({});
      assert.deepEqual(sealed(dir), names);
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'retention.json'), 'utf8')), {});
    } finally {
      await store.close();
    }
  });

  it('a drop a crash cut short (its intent durable, one file unlinked) is finished at the next start', async () => {
    const dir = tempDir('retention-crash');
    await settle(dir, 300);
    const [first] = sealed(dir);
    const data = first.replace('.idx', '.ndjson');
    writeFileSync(
      join(dir, 'history', 'dropped.json'),
      JSON.stringify({ segments: 1, handoffs: 10, settledBefore: T0, removing: [first, data] }),
    );
    unlinkSync(join(dir, 'history', first)); // the crash: the index gone, its data still there
    const store = await opened(dir, T0);
    try {
      assert.equal(existsSync(join(dir, 'history', data)), false, 'finished');
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'history', 'dropped.json'), 'utf8')).removing, []);
      assert.equal(await store.archived(message(1).id), undefined);
      assert.equal((await store.archived(message(300).id))?.message.id, message(300).id);
    } finally {
      await store.close();
    }
  });

  it('a setting that is not one is said and ignored: history is kept whole', async () => {
    for (const bad of [
      '{"keepDays": -3}',
      '{"keepDays": "30"}',
      '{"keepGiB": 0}',
      '{"keepDays": 2, "x": 1}',
      'not json',
    ]) {
      const dir = tempDir('retention-bad');
      await settle(dir, 300);
      const names = sealed(dir);
      writeFileSync(join(dir, 'retention.json'), bad);
      const lines: string[] = [];
      const store = await opened(dir, T0 + 10_000 * DAY, lines);
      try {
        assert.deepEqual(sealed(dir), names, bad);
        assert.deepEqual(store.retention.policy, {});
        assert.ok(
          lines.some((l) => l.includes('retention.json is not a retention setting') && l.includes('kept whole')),
          `${bad}: ${lines.join('\n')}`,
        );
      } finally {
        await store.close();
      }
      assert.equal(readFileSync(join(dir, 'retention.json'), 'utf8'), bad, 'left as it was');
    }
  });

  it('a drop record naming files outside history is refused: the store does not open and nothing is removed', async () => {
    const dir = tempDir('retention-hostile');
    await settle(dir, 100);
    const victim = join(dir, 'state.json');
    const before = readFileSync(victim);
    const record = JSON.stringify({ segments: 1, handoffs: 1, settledBefore: 0, removing: ['../state.json'] });
    writeFileSync(join(dir, 'history', 'dropped.json'), record);
    await assert.rejects(opened(dir, T0), (e: Error) => {
      assert.ok(e instanceof StoreDamage);
      assert.match(e.message, /dropped\.json is not as the hub wrote it/);
      return true;
    });
    assert.deepEqual(readFileSync(victim), before);
    assert.equal(readFileSync(join(dir, 'history', 'dropped.json'), 'utf8'), record);
  });
});

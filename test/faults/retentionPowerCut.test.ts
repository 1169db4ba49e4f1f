// A retention drop under power cuts: the store runs on a file system that keeps only what fsync
// made durable (helpers/crashFs.ts); before every change the drop makes, the state a cut would
// leave is noted, and each distinct image every kind of cut can make of it is opened. Each must
// open (no index without its segment, no segment without its index, no archive without its
// indexes), every segment either still there or counted as dropped, and the newest handoff there.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { Store } from '../../extension/hub/store/store';
import { CrashFs, distinctImages, type DiskState } from '../helpers/crashFs';
import { STORE } from '../helpers/powerCut';
import { doneReceipt, storedMessage } from '../helpers/storedMessage';

const DAY = 86_400_000;
const T0 = 1_700_000_000_000;
const opts = { idempotencyWindowMs: 60_000, segmentBytes: 16 * 1024, minCheckpointBytes: 8 * 1024 };
const message = (i: number) => storedMessage(i, { body: `message ${i} `.padEnd(300, '.'), sentAt: T0 + i });

/** 300 handoffs settled on `fs`, 50 a day. */
async function settle(fs: CrashFs, from = 1): Promise<void> {
  const clock = { t: T0 + (from - 1) * DAY };
  for (let i = from; i < from + 300; i += 50) {
    const store = await Store.open(STORE, 'n', { ...opts, fs, now: () => clock.t });
    const ms = Array.from({ length: 50 }, (_, k) => message(i + k));
    await Promise.all(ms.map((m) => store.commit([{ type: 'sent', message: m }, doneReceipt(m, clock.t)])));
    await store.close();
    clock.t += DAY;
  }
}

/** The drop of every sealed segment, a cut before each change it makes: what is wrong after each. */
async function cutsOfDrop(fs: CrashFs, states: DiskState[], recording: { on: boolean }, newest: number) {
  const store = await Store.open(STORE, 'n', { ...opts, fs, now: () => T0 + 1000 * DAY });
  const sealed = store.history.segments.length;
  assert.ok(sealed >= 4, `sealed: ${sealed}`);
  recording.on = true;
  await store.retention.set({ keepDays: 1 });
  assert.equal(store.history.segments.length, 0);
  await store.close(); // a cut after the drop's last change is a cut before the next one
  recording.on = false;
  let images = 0;
  const failures: string[] = [];
  for (const { image, cut, state } of distinctImages(states)) {
    images++;
    try {
      const s = await Store.open(STORE, 'n', { ...opts, fs: CrashFs.from(image), now: () => T0 });
      try {
        const counted = s.retention.dropped.segments + s.history.segments.length;
        if (counted !== sealed)
          failures.push(`${cut} before ${state.before}: ${counted} segments counted, ${sealed} made`);
        if (!(await s.archived(message(newest).id))) failures.push(`${cut} before ${state.before}: the newest lost`);
      } finally {
        await s.close();
      }
    } catch (e) {
      failures.push(`${cut} before ${state.before}: ${(e as Error).message}`);
    }
  }
  return { images, failures };
}

describe('retention under power cuts', () => {
  it('a cut at any point of a drop leaves a store that opens, each segment there or counted as dropped', async () => {
    const states: DiskState[] = [];
    const recording = { on: false };
    const fs = new CrashFs({ onMutation: (s) => void (recording.on && states.push(s)) });
    await settle(fs);
    const { images, failures } = await cutsOfDrop(fs, states, recording, 300);
    assert.ok(images >= 20, `${images} distinct images of ${states.length} states`);
    assert.deepEqual(failures, []);
  });

  it("the same with an earlier version's archive.ndjson: it goes with its indexes, or they stay with it", async () => {
    // The lines an earlier version wrote, in one file; then segments of this version after them.
    const old = new CrashFs();
    await settle(old);
    const files = old.files();
    const lines = [...files.keys()].filter((p) => p.endsWith('.ndjson') && p.includes('/history/')).sort();
    const archive = Buffer.concat(lines.map((p) => files.get(p)!));
    const dirs = new Set<string>();
    for (let d = STORE; d !== '/'; d = dirname(d)) dirs.add(d);
    dirs.add('/');
    const states: DiskState[] = [];
    const recording = { on: false };
    const fs = CrashFs.from(
      { files: new Map([[join(STORE, 'archive.ndjson'), archive]]), dirs },
      {
        onMutation: (s) => void (recording.on && states.push(s)),
      },
    );
    await settle(fs, 301);
    const { images, failures } = await cutsOfDrop(fs, states, recording, 600);
    assert.ok(images >= 20, `${images} distinct images of ${states.length} states`);
    assert.deepEqual(failures, []);
  });
});

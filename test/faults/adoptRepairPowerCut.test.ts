// Adoption (a folder's old store renamed into the repository's) and `handoff store repair` under
// power cuts, on the store's own crash file system (helpers/crashFs.ts): before every change either
// makes, the state a cut would leave is noted; each distinct image every kind of cut can make of it
// is then started as a hub would start on it — adoption again, the store opened, and when the store
// says it is damaged, the repair the person runs again. Every acknowledged handoff must be there,
// once; the old store is never left as two live copies; nothing is dropped without its copy.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { adoptFolderStores } from '../../extension/hub/start/adoptFolderStores';
import { checkStore, repairable, repairFile } from '../../extension/hub/store/storeCheck';
import type { Hub } from '../../extension/hub/hub';
import { defaultStoreDir } from '../../extension/shared/paths';
import {
  CrashFs,
  CUTS,
  distinctImages,
  imageOf,
  type CrashFsOptions,
  type DiskImage,
  type DiskState,
} from '../helpers/crashFs';
import { hubOn, messagesIn, START } from '../helpers/powerCut';

process.env.XDG_STATE_HOME = '/home/u/.local/state'; // the crash file system's, never the disk's
const REPO = '/home/u/project';
const WORKTREE = '/home/u/project-wt';
const OLD = defaultStoreDir(WORKTREE);
const OURS = defaultStoreDir(REPO);
const sender = { identity: 'alice', session: 'alice-1', node: 'n' };
const owned = async () => ({ owned: true as const, release: () => undefined });
const quiet = () => undefined;

/** A hub on `dir` of `fs` takes `n` handoffs from alice to bob: their ids and bodies. */
async function filled(
  fs: CrashFs,
  dir: string,
  n: number,
  minCheckpointBytes = 6 * 1024,
  /** Runs before the hub closes (and checkpoints): the disk as a kill -9 leaves it. */
  killed?: () => void,
): Promise<{ id: string; body: string }[]> {
  const hub = hubOn(fs, { t: START }, minCheckpointBytes, undefined, dir);
  await hub.start();
  await hub.remember('bob');
  const sent: { id: string; body: string }[] = [];
  for (let k = 0; k < n; k++) {
    const body = `handoff ${k} ${'x'.repeat(200)}`;
    const r = await hub.send(sender, { to: ['bob'], body, idempotencyKey: `k-${k}` });
    sent.push({ id: r.message_id, body });
  }
  killed?.();
  await hub.close();
  return sent;
}

/** Whether a folder of the image holds a file with anything in it. */
function holds(image: DiskImage, dir: string): boolean {
  return [...image.files].some(([p, b]) => p.startsWith(`${dir}/`) && b.length > 0);
}

/** What the image holds once a hub has opened `dir` on it: lost and doubled among `expected`. */
function tally(hub: Hub, image: DiskImage, dir: string, expected: { id: string; body: string }[]) {
  const messages = messagesIn(hub, image, dir);
  const ids = new Set(messages.map((m) => m.id));
  const times = new Map<string, number>();
  for (const m of messages) times.set(String(m.body), (times.get(String(m.body)) ?? 0) + 1);
  return {
    lost: expected.filter((s) => !ids.has(s.id)).length,
    duplicated: [...times.values()].filter((n) => n > 1).length,
  };
}

/** The syncs a repair makes, each as the call that would be deleted (undefined: none deleted). */
const REPAIR_GUARDS: Record<string, CrashFsOptions['skip'] | undefined> = {
  none: undefined,
  "copy's data (fsync before the file is changed)": (call, path) => call === 'sync' && path.includes('.damaged-'),
  "rewritten file's data (fsync before its rename)": (call, path) => call === 'sync' && path.endsWith('.tmp'),
};

const JOURNAL = join(OURS, 'journal.ndjson');

describe('adoption and repair under power cuts', () => {
  it('a cut at any point of an adoption leaves one live copy, and the next start opens it with every handoff, once', async (t) => {
    const states: DiskState[] = [];
    const recording = { on: false };
    const fs = new CrashFs({ onMutation: (s) => void (recording.on && states.push(s)) });
    const sent = await filled(fs, OLD, 40);
    // What a hub of the repository that never stored anything leaves in the way: empty files.
    await fs.mkdirs(OURS, 0o700);
    await (await fs.open(join(OURS, 'journal.ndjson'), 'update')).close();
    await fs.syncDir(OURS);
    await fs.syncDir(join(OURS, '..'));
    assert.ok(
      fs.calls.some((c) => c.includes(`${OLD}/history/`)),
      'the old store has sealed history',
    );
    recording.on = true;
    await adoptFolderStores(REPO, OURS, [WORKTREE], quiet, { fs, lock: owned });
    recording.on = false;
    states.push(fs.state('the end (the store opens next)'));
    const failures: string[] = [];
    let images = 0;
    for (const { image, where } of distinctImages(states)) {
      images++;
      const copies = [OLD, OURS].filter((d) => holds(image, d)).length;
      if (copies !== 1) failures.push(`${where}: ${copies} live copies of the store`);
      // The next start: adoption again (the old store, if still there, is moved now), then the store.
      const again = CrashFs.from(image);
      await adoptFolderStores(REPO, OURS, [WORKTREE], quiet, { fs: again, lock: owned });
      const after = imageOf(again.state('reopened'), CUTS.kept(again.state(''))!);
      if (holds(after, OLD)) failures.push(`${where}: the old store is still there after the next start`);
      const hub = hubOn(again, { t: START + 60_000 }, 6 * 1024, undefined, OURS);
      await hub.start();
      try {
        if (!hub.journal.isOpen) {
          failures.push(`${where}: does not open: ${hub.journal.status.error}`);
          continue;
        }
        const { lost, duplicated } = tally(hub, after, OURS, sent);
        if (lost + duplicated > 0) failures.push(`${where}: ${lost} lost, ${duplicated} duplicated`);
      } finally {
        await hub.close();
      }
    }
    t.diagnostic(`adoption: ${states.length} cut points, ${images} distinct images, ${sent.length} handoffs`);
    assert.ok(states.length >= 4 && images >= 4, `${states.length} cut points, ${images} images`);
    assert.deepEqual(failures, []);
  });

  for (const [what, skip] of Object.entries(REPAIR_GUARDS)) {
    it(
      skip
        ? `without the ${what}, some cut of a repair loses a handoff or drops a line with no copy`
        : 'a cut at any point of a repair leaves a store that opens, or says it is damaged and a repair fixes it, every good handoff once, and nothing dropped without its copy',
      async (t) => {
        const r = await repairUnderCuts(skip);
        t.diagnostic(
          `repair${skip ? ` without the ${what}` : ''}: ${r.cuts} cut points, ${r.images} distinct images, ${r.sent} handoffs (1 in the damaged line of ${r.target}); repaired again in ${r.repairedAgain}; ${r.failures.length} failing${r.failures[0] ? `, first: ${r.failures[0]}` : ''}`,
        );
        if (skip) assert.ok(r.failures.length > 0, `a cut lost something (${r.images} images)`);
        else {
          assert.ok(r.cuts >= 8 && r.images >= 8, `${r.cuts} cut points, ${r.images} images`);
          assert.deepEqual(r.failures, []);
        }
      },
    );
  }
});

async function repairUnderCuts(skip: CrashFsOptions['skip']) {
  const build = new CrashFs();
  let image: DiskImage | undefined;
  const sent = await filled(
    build,
    OURS,
    30,
    1 << 20,
    () => (image = imageOf(build.state(''), CUTS.kept(build.state(''))!)),
  );
  assert.ok(image);
  // One line in the middle of the journal damaged in place, a byte of a body changed: the handoff
  // in it is what a repair drops, every other one stays.
  const target = JOURNAL;
  const lines = image.files.get(target)!.toString('utf8').split('\n');
  const held = sent.filter((s) => lines.some((l) => l.includes(s.id) && l.includes(s.body)));
  assert.ok(held.length >= 10, `${held.length} handoffs in ${target}`);
  const victim = held[Math.floor(held.length / 2)];
  const k = lines.findIndex((l) => l.includes(victim.id));
  lines[k] = lines[k].replace(victim.body, victim.body.replace('x'.repeat(100), `y${'x'.repeat(99)}`));
  const damaged = Buffer.from(lines.join('\n'));
  image.files.set(target, damaged);
  const good = sent.filter((s) => s !== victim);

  const probe = hubOn(CrashFs.from(image), { t: START }, 6 * 1024, undefined, OURS);
  await probe.start();
  assert.equal(probe.journal.isOpen, false, 'the damaged store does not open');
  await probe.close();

  const states: DiskState[] = [];
  const recording = { on: false };
  const fs = CrashFs.from(image, { onMutation: (s) => void (recording.on && states.push(s)), skip });
  recording.on = true;
  await repair(fs, 'first');
  recording.on = false;
  states.push(fs.state('the end (repair done)'));

  const failures: string[] = [];
  let images = 0;
  let repairedAgain = 0;
  for (const { image: cut, where } of distinctImages(states)) {
    images++;
    const now = cut.files.get(target);
    const copies = [...cut.files].filter(([p]) => p.startsWith(`${target}.damaged-`));
    if (now && !now.equals(damaged) && !copies.some(([, b]) => b.equals(damaged)))
      failures.push(`${where}: ${target} was changed with no whole copy of it kept`);
    const again = CrashFs.from(cut);
    let hub = hubOn(again, { t: START + 60_000 }, 6 * 1024, undefined, OURS);
    await hub.start();
    if (!hub.journal.isOpen) {
      const why = hub.journal.status.error ?? '';
      await hub.close();
      if (!/damaged .*handoff store repair/.test(why)) {
        failures.push(`${where}: does not open, and does not say why: ${why}`);
        continue;
      }
      repairedAgain++;
      await repair(again, 'again');
      hub = hubOn(again, { t: START + 60_000 }, 6 * 1024, undefined, OURS);
      await hub.start();
    }
    try {
      if (!hub.journal.isOpen) {
        failures.push(`${where}: does not open after a repair: ${hub.journal.status.error}`);
        continue;
      }
      const after = imageOf(again.state('opened'), CUTS.kept(again.state(''))!);
      const { lost, duplicated } = tally(hub, after, OURS, good);
      if (lost + duplicated > 0) failures.push(`${where}: ${lost} lost, ${duplicated} duplicated`);
    } finally {
      await hub.close();
    }
  }
  return { cuts: states.length, images, sent: sent.length, target, repairedAgain, failures };
}

/** `handoff store repair --yes`, as storeCommand runs it, on `fs`. */
async function repair(fs: CrashFs, stamp: string): Promise<void> {
  const checks = await checkStore(OURS, fs);
  const fixable = checks.filter((c) => c.damage && repairable(c));
  assert.equal(fixable.length, 1, JSON.stringify(checks.map((c) => [c.path, c.damage?.why])));
  for (const c of fixable) await repairFile(c, stamp, fs);
}

// `npm run bench`, part 7: what a checkpoint costs the senders. A store with 100 000 open messages
// (hub in process), 4 senders sending continuously, three ways in one run, rounds alternating:
// no checkpoint at all (the reference), checkpoints written behind the commits (the hub's way),
// and whole checkpoints with commits paused (the way before). Every send's latency is kept: the
// max and p99.9 are what a checkpoint shows up in. Each round starts its senders once the hub has
// filled in the indexes it leaves out of its start (start.bench.ts measures a send right after start).
import { cpSync } from 'node:fs';
import { Hub } from '../../extension/hub/hub';
import { ROOT, tempDir } from '../helpers/hubProcess';
import { body, median } from './stats';
import { fillStore } from './fillStore';

const quick = process.argv.includes('--quick');
const OPEN = quick ? 10_000 : 100_000;
const SENDERS = 4;
const PER_ROUND = quick ? 1500 : 4000;
const ROUNDS = quick ? 2 : 3;
/** Journal bytes between two checkpoints: several in every round. */
const EVERY = quick ? 256 * 1024 : 1024 * 1024;

const ALL_MODES = {
  'no checkpoint': { checkpointAtBytes: Number.MAX_SAFE_INTEGER },
  'checkpoints behind the commits': { checkpointAtBytes: EVERY },
  'whole checkpoints, commits paused': { checkpointAtBytes: EVERY, checkpointBehind: false },
} as const;
/** `--only=behind` (a substring of a mode's name) runs that way alone, to profile it. */
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const MODES = Object.fromEntries(
  Object.entries(ALL_MODES).filter(([name]) => !only || name === 'no checkpoint' || name.includes(only)),
) as Partial<typeof ALL_MODES>;

async function round(base: string, mode: keyof typeof ALL_MODES, r: number): Promise<number[]> {
  const dir = tempDir(`bench-ckpt-${r}`);
  cpSync(base, dir, { recursive: true });
  const hub = new Hub({ workspace: ROOT, storeDir: dir, node: 'bench', store: MODES[mode] });
  await hub.start();
  // The indexes start leaves out are filled in behind it (start.bench measures that); then the senders.
  await hub.backfilled;
  const lat: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SENDERS }, async (_, s) => {
      const caller = { identity: 'alice', session: `s${s}`, node: 'bench' };
      while (next < PER_ROUND) {
        const i = next++;
        const t = performance.now();
        await hub.send(caller, { to: ['bob'], body: body(OPEN + i), insist: true });
        lat.push(performance.now() - t);
      }
    }),
  );
  await hub.close();
  return lat;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function main(): Promise<void> {
  const base = tempDir('bench-ckpt-base');
  const t = performance.now();
  await fillStore(base, OPEN);
  console.error(`# ${OPEN} open messages written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const lat: Record<string, number[]> = Object.fromEntries(Object.keys(MODES).map((m) => [m, []]));
  for (let r = 0; r < ROUNDS; r++)
    for (const mode of Object.keys(MODES) as (keyof typeof ALL_MODES)[])
      lat[mode].push(...(await round(base, mode, r)));
  const ref = median(lat['no checkpoint']);
  console.log(
    `\nSend latency at ${OPEN} open, ${SENDERS} senders continuously, ${ROUNDS}×${PER_ROUND} sends per way, a checkpoint every ${EVERY / 1024} KiB of journal (${new Date().toISOString()}):\n`,
  );
  console.log('| checkpoints | p50 | p99 | p99.9 | max | p99.9 ÷ p50 without checkpoints |\n|---|---|---|---|---|---|');
  for (const [mode, xs] of Object.entries(lat))
    console.log(
      `| ${mode} | ${median(xs).toFixed(2)} ms | ${pct(xs, 0.99).toFixed(2)} ms | ${pct(xs, 0.999).toFixed(2)} ms | ${Math.max(...xs).toFixed(1)} ms | ${(pct(xs, 0.999) / ref).toFixed(2)} |`,
    );
  console.log('\nGoal (issue 25): max ≤ 20 ms and p99.9 ≤ 3 × the p50 without checkpoints.');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

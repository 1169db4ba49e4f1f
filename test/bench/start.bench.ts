// `npm run bench`, part 8: how long a hub takes to start on a full store. The real hub process
// (dist/hub.js) on a store with 100 000 open messages and on an empty one, rounds alternating,
// each on a fresh copy of its store: the time from spawn until it listens (its "listening" line)
// and until it answers a first call (a hook's exchange for bob, whose mail the store holds).
//   node out/test/bench/start.bench.js [--quick] [--open=N] [--against=OLD/dist/hub.js]
// --against starts another build of the hub too, in the same rounds, to compare a change side by side.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DIST, NODE, stoppable, tempDir } from '../helpers/hubProcess';
import { median } from './stats';
import { fillStore } from './fillStore';
import { firstAnswer } from './firstAnswer';

const quick = process.argv.includes('--quick');
const OPEN = Number(
  process.argv.find((a) => a.startsWith('--open='))?.slice('--open='.length) ?? (quick ? 10_000 : 100_000),
);
const ROUNDS = quick ? 3 : 7;
const against = process.argv.find((a) => a.startsWith('--against='))?.slice('--against='.length);

/** Spawns the hub as `handoff hub` runs it; resolves once it says it listens. */
function spawnHub(program: string, args: string[], env: NodeJS.ProcessEnv) {
  const proc = spawn(NODE, [program, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const ready = new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('listening on')) resolve();
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`hub exited with ${code} before listening:\n${out}`)));
  });
  return { proc, ready };
}

async function startOnce(
  program: string,
  base: string,
  r: number,
  env: NodeJS.ProcessEnv = {},
): Promise<{ listening: number; answered: number }> {
  const dir = tempDir(`bench-start-${r}`);
  const store = join(dir, 'store');
  cpSync(base, store, { recursive: true });
  const socket = join(dir, 'hub.sock');
  const workspace = join(dir, 'ws');
  mkdirSync(workspace);
  const t0 = performance.now();
  const { proc, ready } = spawnHub(program, ['--workspace', workspace, '--store', store, '--socket', socket], env);
  await ready;
  const listening = performance.now() - t0;
  await firstAnswer(socket);
  const answered = performance.now() - t0;
  await stoppable(proc).stop();
  return { listening, answered };
}

async function main(): Promise<void> {
  const full = join(tempDir('bench-start-full'), 'store');
  const empty = join(tempDir('bench-start-empty'), 'store');
  const t = performance.now();
  await fillStore(full, OPEN);
  await fillStore(empty, 0);
  console.log(`# ${OPEN} open messages written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  // As the editor starts it too: with V8's compile cache (client/hubLaunch.ts), filled by a first start here.
  const cache = tempDir('bench-start-v8');
  const hubs: Record<string, [string, NodeJS.ProcessEnv]> = {
    '': [join(DIST, 'hub.js'), {}],
    ', compile cache (as the editor starts it)': [join(DIST, 'hub.js'), { NODE_COMPILE_CACHE: cache }],
    ...(against ? { ' (reference build)': [against, {}] as [string, NodeJS.ProcessEnv] } : {}),
  };
  await startOnce(join(DIST, 'hub.js'), empty, -1, { NODE_COMPILE_CACHE: cache });
  const runs: Record<string, { listening: number[]; answered: number[] }> = {};
  for (let r = 0; r < ROUNDS; r++)
    for (const [which, [program, env]] of Object.entries(hubs))
      for (const [store, base] of Object.entries({ empty, [`${OPEN} open`]: full })) {
        const name = `${store}${which}`;
        const { listening, answered } = await startOnce(program, base, r, env);
        (runs[name] ??= { listening: [], answered: [] }).listening.push(listening);
        runs[name].answered.push(answered);
      }
  const ref = runs.empty; // this build's empty start: the reference build's rows are ratios to it too
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`\nHub start (spawn → listening, → first answer), ${ROUNDS} alternating rounds, medians:\n`);
  console.log('| store | listening | first answer | listening ÷ empty | first answer ÷ empty |\n|---|---|---|---|---|');
  for (const [name, x] of Object.entries(runs))
    console.log(
      `| ${name} | ${s(median(x.listening))} | ${s(median(x.answered))} | ${(median(x.listening) / median(ref.listening)).toFixed(2)} | ${(median(x.answered) / median(ref.answered)).toFixed(2)} |`,
    );
  console.log('\nGoal (issue 25): ≤ 0.3 s and ≤ ×3 the empty store, until listening and until the first answer.');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

// `npm run bench`, history: a store with N archived (settled) handoffs against the same store with
// none, side by side in one run — the real hub's start until it listens and its RSS then — and, in
// process, an old archived handoff read by id and a search for a word in 100 of them (p50).
//   node out/test/bench/history.bench.js [--archived=N] [--rounds=R]
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '../../extension/hub/bus/model';
import { Store } from '../../extension/hub/store/store';
import { spawnHub, stoppable, tempDir } from '../helpers/hubProcess';
import { median } from './stats';
import { doneReceipt, storedMessage } from '../helpers/storedMessage';

const arg = (name: string, d: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d);
const N = arg('archived', 100_000);
const ROUNDS = arg('rounds', 5);
const opts = { idempotencyWindowMs: 60_000 };

const message = (i: number) =>
  storedMessage(i, {
    thread: `t${i % 1000}`,
    // One word in 100 of them at any N: "needle" in every (N/100)th.
    body: `handoff ${i} ${i % Math.max(1, Math.floor(N / 100)) === 0 ? 'needle' : 'hay'} `.padEnd(1200, 'x'),
    sentAt: 1_700_000_000_000 + i,
  });

async function fill(dir: string, n: number): Promise<void> {
  const store = await Store.open(dir, 'n', opts);
  const done = (m: Message) => doneReceipt(m, m.sentAt);
  for (let i = 1; i <= n; i += 500) {
    const ms = Array.from({ length: Math.min(500, n - i + 1) }, (_, k) => message(i + k));
    await Promise.all(ms.map((m) => store.commit([{ type: 'sent', message: m }, done(m)])));
  }
  await store.close();
}

async function startOnce(base: string, r: number): Promise<{ listening: number; rss: number }> {
  const dir = tempDir(`bench-history-${r}`);
  const store = join(dir, 'store');
  cpSync(base, store, { recursive: true });
  const workspace = join(dir, 'ws');
  mkdirSync(workspace);
  const t0 = performance.now();
  const { proc, ready } = spawnHub({ workspace, store, socket: join(dir, 'hub.sock') });
  await ready;
  const listening = performance.now() - t0;
  const rss = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(proc.pid)]).toString()) * 1024;
  await stoppable(proc).stop();
  return { listening, rss };
}

async function p50(times: number, f: () => Promise<unknown>): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = performance.now();
    await f();
    ms.push(performance.now() - t);
  }
  return median(ms);
}

async function main(): Promise<void> {
  const full = join(tempDir('bench-history-full'), 'store');
  const empty = join(tempDir('bench-history-empty'), 'store');
  const t = performance.now();
  await fill(full, N);
  await fill(empty, 0);
  console.log(`# ${N} archived handoffs written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const runs: Record<string, { listening: number[]; rss: number[] }> = {};
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, base] of Object.entries({ none: empty, [`${N} archived`]: full })) {
      const x = await startOnce(base, r);
      (runs[name] ??= { listening: [], rss: [] }).listening.push(x.listening);
      runs[name].rss.push(x.rss);
    }
  const store = await Store.open(full, 'n', opts);
  const old = (i: number) => message(1 + ((i * 7919) % Math.max(1, N - 20_000))).id; // never in the recent window
  let k = 0;
  const get = await p50(200, () => store.archived(old(k++)));
  let hits = 0;
  const search = await p50(
    20,
    async () => (hits = (await store.history.search({ text: 'needle', limit: 100 })).length),
  );
  const viewer = await p50(20, () =>
    store.history.search({ text: 'needle', viewer: { identity: 'bob', roles: [] }, limit: 100 }),
  );
  await store.close();
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  console.log(`\nHub start (spawn → listening) and RSS then, ${ROUNDS} alternating rounds, medians:\n`);
  console.log('| store | listening | ÷ none | RSS | − none |\n|---|---|---|---|---|');
  for (const [name, x] of Object.entries(runs))
    console.log(
      `| ${name} | ${(median(x.listening) / 1000).toFixed(2)} s | ${(median(x.listening) / median(runs.none.listening)).toFixed(2)} | ${mb(median(x.rss))} | ${mb(median(x.rss) - median(runs.none.rss))} |`,
    );
  console.log(
    `\nget an old archived handoff by id: ${get.toFixed(2)} ms p50; search for a word in ${hits} of them: ${search.toFixed(1)} ms p50 (as bob, only his: ${viewer.toFixed(1)} ms)`,
  );
  console.log('Goal (issue 35, at 1 000 000): start ≤ ×1.2, RSS ≤ +30 MB, get ≤ 5 ms p50, search ≤ 100 ms p50.');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

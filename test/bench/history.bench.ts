// `npm run bench`, history: a store with N archived (settled) handoffs against the same store with
// none, side by side in one run — the real hub's start until it listens and until its first answer,
// and its RSS then — and, in process, an old archived handoff read by id and a search for a word in
// 100 of them (p50). The history is written in process with the store's own writer (History.append,
// which seals each segment with its index and lists it in the catalog), not sent through a hub.
//   node out/test/bench/history.bench.js [--archived=N] [--rounds=R]
import { execFileSync } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { emptyState, type Message } from '../../extension/hub/bus/model';
import { apply } from '../../extension/hub/bus/reduce';
import { History } from '../../extension/hub/store/history';
import { Store } from '../../extension/hub/store/store';
import type { ArchivedMessage } from '../../extension/hub/store/history';
import { nodeFs } from '../../extension/hub/store/storeFs';
import { spawnHub, stoppable, tempDir } from '../helpers/hubProcess';
import { firstAnswer } from './firstAnswer';
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

/** Each handoff as a checkpoint archives it: sent, done (reduce.ts), then appended to the history in batches. */
async function fill(dir: string, n: number): Promise<void> {
  await (await Store.open(dir, 'n', opts)).close();
  const history = await History.open(dir, { fs: nodeFs });
  try {
    for (let i = 1; i <= n; i += 5000) {
      const state = emptyState('n');
      const ms: Message[] = Array.from({ length: Math.min(5000, n - i + 1) }, (_, k) => message(i + k));
      for (const m of ms) {
        apply(state, { type: 'sent', message: m });
        apply(state, doneReceipt(m, m.sentAt));
      }
      await history.append(ms.map((m): ArchivedMessage => ({ ...state.hot[m.id], message: m, archivedAt: m.sentAt })));
    }
  } finally {
    await history.close();
  }
}

/**
 * A fresh copy of the store: sealed segments and their indexes, never written again, hard-linked;
 * the rest copied and fsync'd, as a store's files are before a start (else the start's own fsync of
 * the segment being written pays for the copy).
 */
function copyStore(from: string, to: string): void {
  mkdirSync(join(to, 'history'), { recursive: true, mode: 0o700 });
  const copy = (a: string, b: string) => {
    copyFileSync(a, b);
    const fd = openSync(b, 'r+');
    fsyncSync(fd);
    closeSync(fd);
  };
  for (const f of readdirSync(from)) if (f !== 'history') copy(join(from, f), join(to, f));
  const h = join(from, 'history');
  for (const f of readdirSync(h)) {
    const sealed = f.endsWith('.idx') || (f.endsWith('.ndjson') && existsSync(join(h, f.replace(/ndjson$/, 'idx'))));
    (sealed ? linkSync : copy)(join(h, f), join(to, 'history', f));
  }
}

async function startOnce(base: string, r: number): Promise<{ listening: number; answered: number; rss: number }> {
  const dir = tempDir(`bench-history-${r}`);
  const store = join(dir, 'store');
  copyStore(base, store);
  const workspace = join(dir, 'ws');
  mkdirSync(workspace);
  const socket = join(dir, 'hub.sock');
  const t0 = performance.now();
  const { proc, ready } = spawnHub({ workspace, store, socket });
  await ready;
  const listening = performance.now() - t0;
  await firstAnswer(socket);
  const answered = performance.now() - t0;
  const rss = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(proc.pid)]).toString()) * 1024;
  await stoppable(proc).stop();
  return { listening, answered, rss };
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
  const runs: Record<string, { listening: number[]; answered: number[]; rss: number[] }> = {};
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, base] of Object.entries({ none: empty, [`${N} archived`]: full })) {
      const x = await startOnce(base, r);
      const run = (runs[name] ??= { listening: [], answered: [], rss: [] });
      run.listening.push(x.listening);
      run.answered.push(x.answered);
      run.rss.push(x.rss);
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
  const viewer = await p50(20, () => store.history.search({ text: 'needle', viewer: { identity: 'bob' }, limit: 100 }));
  await store.close();
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  const s = (ms: number) => `${(ms / 1000).toFixed(3)} s`;
  const ratio = (x: number[], ref: number[]) => (median(x) / median(ref)).toFixed(2);
  console.log(
    `\nHub start (spawn → listening, → first answer) and RSS at the first answer, ${ROUNDS} alternating rounds, medians:\n`,
  );
  console.log('| store | listening | ÷ none | first answer | ÷ none | RSS | − none |\n|---|---|---|---|---|---|---|');
  for (const [name, x] of Object.entries(runs))
    console.log(
      `| ${name} | ${s(median(x.listening))} | ${ratio(x.listening, runs.none.listening)} | ${s(median(x.answered))} | ${ratio(x.answered, runs.none.answered)} | ${mb(median(x.rss))} | ${mb(median(x.rss) - median(runs.none.rss))} |`,
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

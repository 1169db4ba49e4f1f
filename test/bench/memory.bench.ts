// What the hub holds per open message (issue #13: ≤ 150 MB RSS with 100 000 open). A store is
// prefilled afresh (so every message is inside the duplicate window, as in the bridge bench: the
// hub remembers each one's fingerprint), then opened twice:
//   1. in a child process with --expose-gc, a Hub in process: heapUsed and RSS after a full GC, and
//      the peak RSS of loading, once every message is read (a start from the open index reads them
//      behind it: store/lazyHot.ts);
//   2. as the real hub process (dist/hub.js): its RSS and high-water mark once it says so.
// `node out/test/bench/memory.bench.js [N]` (default 100 000).
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Hub } from '../../extension/hub/hub';
import { ROOT, startHub, tempDir } from '../helpers/hubProcess';
import { fillStore } from './fillStore';
import { waitUntil } from '../helpers/wait';

const MB = 1024 * 1024;

/** In the child: open the hub on the store, collect garbage, report. */
async function child(storeDir: string): Promise<void> {
  const hub = new Hub({ workspace: ROOT, storeDir, node: 'bench', tickMs: 0 });
  await hub.start();
  await hub.backfilled;
  const gc = (globalThis as { gc?: () => void }).gc!;
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  process.stdout.write(
    JSON.stringify({
      open: Object.keys(hub.state.hot).length,
      heapUsed: m.heapUsed,
      rss: m.rss,
      peakRss: process.resourceUsage().maxRSS * 1024,
    }),
  );
  process.exit(0);
}

function status(pid: number, field: string): number {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') return child(process.argv[3]);
  const n = Number(process.argv[2] ?? 100_000);
  const storeDir = join(tempDir('memory-bench'), 'store');
  const t = performance.now();
  await fillStore(storeDir, n);
  console.log(`prefilled ${n} open in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const r = spawnSync(process.execPath, ['--expose-gc', __filename, '--child', storeDir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  const inProcess = JSON.parse(r.stdout) as { open: number; heapUsed: number; rss: number; peakRss: number };
  const hub = await startHub({ store: storeDir });
  await waitUntil(
    () => hub.log().includes('indexes filled in'),
    60_000,
    () => 'the hub to read its store',
  );
  const rss = status(hub.proc.pid!, 'VmRSS');
  const hwm = status(hub.proc.pid!, 'VmHWM');
  await hub.stop();
  rmSync(storeDir, { recursive: true, force: true });
  console.log(
    `${inProcess.open} open, in process after GC: heapUsed ${(inProcess.heapUsed / MB).toFixed(0)} MB, RSS ${(inProcess.rss / MB).toFixed(0)} MB, peak RSS ${(inProcess.peakRss / MB).toFixed(0)} MB`,
  );
  console.log(
    `hub process (dist/hub.js): RSS ${(rss / MB).toFixed(0)} MB, high-water mark ${(hwm / MB).toFixed(0)} MB (target ≤ 150 MB)`,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

// `npm test`'s runner after the build: every out/test/**/*.test.js, plus the no-Linux-powers lane
// (.ci/lane-no-linux-powers.sh's files with /proc and tmux switched off), each file in a
// `node --test` process of its own, in HANDOFF_TEST_LANES lanes side by side (2 by default: the
// machine's cores). A suite that starts a real editor, agent CLI or homeserver is heavy: at most
// one heavy suite runs at a time, so two of them never share the cores with each other, while the
// other lane works through the light ones. Longest first, by test/suiteTimes.json (seconds, as
// measured by this runner; HANDOFF_WRITE_SUITE_TIMES=1 rewrites it). A file's output is printed
// whole when it ends, so lanes never interleave; the end lists the slowest suites and every failure.
// Each suite gets a HOME and XDG folders of its own, emptied after it: a test that forgets to give
// a CLI or hub its own HOME can neither read nor write the user's (~/.claude.json, ~/.codex,
// ~/.gemini, ~/.local/state/handoff), nor see what another suite left there. The tools and npm's
// cache stay where the user's HOME has them.
//
//   node test/helpers/suites.mjs [file.test.js ...]     # default: all of out/test
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, homedir, tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { toolsRoot } from './skip.mjs';
import { killStrays } from './strays.mjs';

const root = join(import.meta.dirname, '..', '..');
const timesFile = join(root, 'test', 'suiteTimes.json');
const HEAVY = ['vscode', 'e2e', 'agents', 'matrix'];
const NO_POWERS_ENV = { HANDOFF_POWERS_OFF: 'procfs,tmux' };

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.js'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

function noPowersLane() {
  const script = readFileSync(join(root, '.ci', 'lane-no-linux-powers.sh'), 'utf8');
  return [...script.matchAll(/^\s*(out\/test\/\S+\.test\.js)/gm)].map((m) => join(root, m[1]));
}

const named = process.argv.slice(2).map((f) => join(process.cwd(), f));
const jobs = [
  ...(named.length > 0 ? named : testFiles(join(root, 'out', 'test'))).map((file) => ({ file, env: {} })),
  ...(named.length > 0 ? [] : noPowersLane().map((file) => ({ file, env: NO_POWERS_ENV }))),
];
for (const job of jobs) {
  const rel = relative(root, job.file);
  job.key = job.env.HANDOFF_POWERS_OFF ? `${rel} (no Linux powers)` : rel;
  job.heavy = HEAVY.includes(rel.split(sep)[2]);
}

const known = existsSync(timesFile) ? JSON.parse(readFileSync(timesFile, 'utf8')) : {};
const estimate = (job) => known[job.key] ?? 30;
const queue = [...jobs].sort((a, b) => estimate(b) - estimate(a));
const lanes = Math.max(1, Number(process.env.HANDOFF_TEST_LANES) || Math.min(2, availableParallelism()));

/** A suite still running after this is hung: it fails, and the others go on. */
const LIMIT_S = Number(process.env.HANDOFF_SUITE_LIMIT_S) || 1200;
const running = new Set();
const killGroup = (child) => {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
};
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    for (const child of running) killGroup(child);
    process.exit(1);
  });

// Read from the user's HOME once, before any suite's HOME replaces it.
const KEPT_ENV = {
  HANDOFF_TOOLS: toolsRoot(),
  npm_config_cache: process.env.npm_config_cache || join(process.env.HOME || homedir(), '.npm'),
};

/** A HOME with its XDG folders for one suite. */
function suiteHome() {
  const home = mkdtempSync(join(tmpdir(), 'handoff-suite-home-'));
  const xdg = {
    XDG_CACHE_HOME: '.cache',
    XDG_CONFIG_HOME: '.config',
    XDG_DATA_HOME: '.local/share',
    XDG_STATE_HOME: '.local/state',
  };
  const env = { ...KEPT_ENV, HOME: home };
  for (const [name, sub] of Object.entries(xdg)) {
    env[name] = join(home, sub);
    mkdirSync(env[name], { recursive: true });
  }
  return env;
}

const results = [];
let heavyRunning = false;
const started = Date.now();

function runOne(job) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const home = suiteHome();
    const child = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', job.file], {
      cwd: root,
      env: { ...process.env, ...home, ...job.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so a suite over its limit goes with everything it started
    });
    running.add(child);
    const limit = setTimeout(() => {
      out.push(Buffer.from(`\n[suites] ${job.key} ran past ${LIMIT_S} s: stopped with everything it started\n`));
      killGroup(child);
    }, LIMIT_S * 1000);
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    // A process a suite left running (a tmux server, a shell) may hold the pipes after the suite
    // exits: its output is what came before the exit and a moment after, then the pipes are let go.
    child.on('exit', () =>
      // sleep: no event says a grandchild will never write to the pipes it holds
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 2000).unref(),
    );
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      running.delete(child);
      killStrays(home.HOME);
      try {
        rmSync(home.HOME, { recursive: true, force: true, maxRetries: 5 });
      } catch (e) {
        out.push(Buffer.from(`\n[suites] could not remove ${home.HOME}: ${e.message}\n`));
      }
      const seconds = (Date.now() - t0) / 1000;
      const text = Buffer.concat(out).toString();
      process.stdout.write(`\n▶ ${job.key} (${seconds.toFixed(1)} s)\n${text}`);
      const count = (word) => Number(new RegExp(`^ℹ ${word} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      resolve({
        key: job.key,
        seconds,
        ok: code === 0,
        why: signal ?? code,
        pass: count('pass'),
        fail: Math.max(count('fail'), code === 0 ? 0 : 1),
        skipped: count('skipped'),
      });
    });
  });
}

// The next job a free lane may take: the longest heavy one if no heavy one runs, else the longest light one.
function take() {
  const i = queue.findIndex((j) => !j.heavy || !heavyRunning);
  return i < 0 ? undefined : queue.splice(i, 1)[0];
}

const waiting = [];
async function lane() {
  for (;;) {
    const job = take();
    if (!job) {
      if (queue.length === 0) return;
      await new Promise((r) => waiting.push(r)); // a heavy suite is running: wait for it to end
      continue;
    }
    if (job.heavy) heavyRunning = true;
    results.push(await runOne(job));
    if (job.heavy) heavyRunning = false;
    for (const r of waiting.splice(0)) r();
  }
}

await Promise.all(Array.from({ length: lanes }, lane));

const wall = (Date.now() - started) / 1000;
const sum = results.reduce((s, r) => s + r.seconds, 0);
const slow = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 15);
console.log(
  `\nThe slowest suites (${results.length} in ${lanes} lanes: ${wall.toFixed(0)} s wall, ${sum.toFixed(0)} s summed):`,
);
for (const r of slow) console.log(`  ${r.seconds.toFixed(1).padStart(7)} s  ${r.key}`);
const failed = results.filter((r) => !r.ok);
for (const r of failed) console.log(`FAILED (exit ${r.why}): ${r.key}`);

if (process.env.HANDOFF_WRITE_SUITE_TIMES) {
  const times = Object.fromEntries(results.map((r) => [r.key, Math.round(r.seconds)]).sort());
  writeFileSync(timesFile, `${JSON.stringify(times, null, 2)}\n`);
}
const total = (k) => results.reduce((s, r) => s + r[k], 0);
console.log(`${failed.length} of ${results.length} suites failed`);
console.log(`tests: ${total('pass')} passed, ${total('fail')} failed, ${total('skipped')} skipped`);
process.exit(failed.length > 0 ? 1 : 0);

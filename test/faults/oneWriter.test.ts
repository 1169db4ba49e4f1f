// One writer per store, with real processes released together: two processes asking a store's lock
// at once (this file, run as a child, is the racer), two real hubs started at once on one store from
// two sockets, each with and without a previous owner killed by -9 first; adoption of a store a live
// older hub still has open; and `handoff store repair --yes` beside a hub of another folder.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { takeProcessLock } from '../../extension/shared/processLock';
import { markProcess } from '../../extension/shared/proc';
import { workspaceKey } from '../../extension/shared/paths';
import { connectAgent } from '../helpers/agent';
import { DIST, NODE, spawnHub, stoppable, tempDir } from '../helpers/hubProcess';
import { git } from '../helpers/git';
import { waitFor } from '../helpers/wait';

const RACER = process.env.HANDOFF_LOCK_RACER;

if (RACER) {
  // A racer: waits for the start line to exist, asks the lock once, says what it got, and holds
  // it until its stdin closes — so two "owned" lines are two owners at the same time.
  const [store, go] = RACER.split('\n');
  const spin = new Int32Array(new SharedArrayBuffer(4));
  void (async () => {
    process.stdout.write('ready\n'); // loaded: from here it only waits for the start line
    while (!exists(go)) Atomics.wait(spin, 0, 0, 1);
    const lock = await takeProcessLock(store);
    process.stdout.write(lock.owned ? 'owned\n' : 'held\n');
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));
  })();
} else {
  describe('one writer per store', () => {
    it('two processes released together on one lock: one owner every round, with a killed owner before and without', async () => {
      const dir = realpathSync(tempDir('lock-race'));
      const rounds = Number(process.env.HANDOFF_LOCK_ROUNDS) || 40;
      let twoOwners = 0;
      let noOwner = 0;
      for (let round = 0; round < rounds; round++) {
        const store = join(dir, `store-${round}`);
        const go = join(dir, `go-${round}`);
        if (round % 2 === 1) {
          // A previous owner killed by -9 while holding it: its hint stays behind.
          const dead = racer(store, go);
          writeFileSync(go, '');
          assert.equal(await dead.answer, 'owned');
          dead.proc.kill('SIGKILL');
          await new Promise((r) => dead.proc.once('exit', r));
          assert.ok(
            readFileSync(`${store}.lock`, 'utf8').includes(String(dead.proc.pid)),
            'the dead owner’s hint is left',
          );
        }
        const go2 = `${go}-2`;
        const a = racer(store, go2);
        const b = racer(store, go2);
        await Promise.all([a.ready, b.ready]);
        writeFileSync(go2, '');
        const answers = await Promise.all([a.answer, b.answer]);
        const owners = answers.filter((x) => x === 'owned').length;
        if (owners > 1) twoOwners++;
        if (owners === 0) noOwner++;
        a.proc.stdin!.end();
        b.proc.stdin!.end();
        await Promise.all([a.exited, b.exited]);
      }
      assert.equal(twoOwners, 0, `${twoOwners} of ${rounds} rounds had two owners`);
      assert.equal(noOwner, 0, `${noOwner} of ${rounds} rounds had no owner`);
    });

    it('two real hubs started together on one store from two sockets: one serves, every round', async () => {
      const base = realpathSync(tempDir('hub-race'));
      const rounds = Number(process.env.HANDOFF_HUB_ROUNDS) || 8;
      let twoOwners = 0;
      for (let round = 0; round < rounds; round++) {
        const store = join(base, `store-${round}`);
        const ws = join(base, `ws-${round}`);
        mkdirSync(ws);
        const sock = (k: string) => join(base, `run-${round}-${k}`, 'hub.sock');
        if (round % 2 === 1) {
          const first = spawnHub({ workspace: ws, store, socket: sock('first') });
          await first.ready;
          await stoppable(first.proc).kill9();
        }
        const hubs = [
          spawnHub({ workspace: ws, store, socket: sock('a') }),
          spawnHub({ workspace: ws, store, socket: sock('b') }),
        ];
        const results = await Promise.all(
          hubs.map((h) =>
            h.ready.then(
              () => 'serves',
              () => 'refused',
            ),
          ),
        );
        if (results.filter((r) => r === 'serves').length !== 1) twoOwners++;
        for (const h of hubs) await stop(h.proc);
      }
      assert.equal(twoOwners, 0, `${twoOwners} of ${rounds} rounds without exactly one hub serving`);
    });

    it('a store a live older hub has open is not adopted: the repository’s hub says it waits and why, and adopts it, every acknowledged handoff in it, once that hub is gone', async () => {
      const r = repo();
      // The older per-folder hub of the worktree, still running (a window not reloaded after an update).
      const old = spawnHub({
        workspace: r.wt,
        store: r.storeOf(r.wt),
        socket: join(r.base, 'old', 'hub.sock'),
        env: r.env,
      });
      await old.ready;
      await (
        await connectAgent({ socket: join(r.base, 'old', 'hub.sock'), name: 'bob', cwd: r.wt, env: r.env })
      ).close();
      const alice = await connectAgent({
        socket: join(r.base, 'old', 'hub.sock'),
        name: 'alice',
        cwd: r.wt,
        env: r.env,
      });
      const ids: string[] = [];
      const send = async (k: number) =>
        ids.push((await alice.ok('send_handoff', { to: 'bob', body: `mail ${k}` })).message_id as string);
      for (let k = 0; k < 5; k++) await send(k);
      const repoHub = spawnHub({ workspace: r.wt, store: r.storeOf(r.root), socket: null, env: r.env });
      const listening = repoHub.ready.then(() => true);
      await waitFor(
        () => /waiting to adopt .*wt-one's own store .*a running hub \(pid \d+\) has it open/.test(repoHub.output()),
        30_000,
        'the waiting line',
      );
      // The older hub goes on accepting sends, and its store is not touched under it.
      for (let k = 5; k < 15; k++) await send(k);
      assert.equal(
        // sleep: proving an absence: the repository's hub is not listening a moment after the sends
        await Promise.race([listening, new Promise((res) => setTimeout(() => res(false), 300))]),
        false,
        'not serving its store yet',
      );
      assert.ok(statSync(r.storeOf(r.wt)).isDirectory(), 'the old store is where it was');
      await alice.close();
      await stoppable(old.proc).kill9();
      await repoHub.ready;
      assert.match(repoHub.output(), /has stopped: adopting its store now/);
      assert.match(repoHub.output(), /store migrated: .*wt-one had a store of its own/);
      const bob = await connectAgent({ socket: '', name: 'bob', cwd: r.root, env: r.env, ownAgentProcess: true });
      try {
        const inbox = (await bob.ok('inbox', {})).messages as { message_id: string }[];
        assert.deepEqual(inbox.map((m) => m.message_id).sort(), [...ids].sort(), 'all 15 acknowledged handoffs');
      } finally {
        await bob.close();
        await stoppable(repoHub.proc).stop();
      }
    });

    it('a store an older Handoff holds by its lock file alone is not adopted while that process lives', async () => {
      const r = repo();
      const old = spawnHub({
        workspace: r.wt,
        store: r.storeOf(r.wt),
        socket: join(r.base, 'old', 'hub.sock'),
        env: r.env,
      });
      await old.ready;
      await (
        await connectAgent({ socket: join(r.base, 'old', 'hub.sock'), name: 'bob', cwd: r.wt, env: r.env })
      ).close();
      const alice = await connectAgent({
        socket: join(r.base, 'old', 'hub.sock'),
        name: 'alice',
        cwd: r.wt,
        env: r.env,
      });
      await alice.ok('send_handoff', { to: 'bob', body: 'before the update' });
      await alice.close();
      await stoppable(old.proc).stop();
      // What a hub from before the kernel lock leaves while it runs: its pid and start time in `<store>.lock`.
      const sleeper = spawn('sleep', ['600']);
      await waitFor(() => markProcess(sleeper.pid!).start !== undefined);
      writeFileSync(
        `${r.storeOf(r.wt)}.lock`,
        JSON.stringify({ pid: sleeper.pid, started: markProcess(sleeper.pid!).start }),
      );
      const repoHub = spawnHub({ workspace: r.wt, store: r.storeOf(r.root), socket: null, env: r.env });
      await waitFor(
        () => new RegExp(`a running hub \\(pid ${sleeper.pid}\\) has it open`).test(repoHub.output()),
        30_000,
        'the waiting line',
      );
      sleeper.kill('SIGKILL');
      await repoHub.ready;
      assert.match(repoHub.output(), /store migrated/);
      await stoppable(repoHub.proc).stop();
    });

    it('`handoff store repair --yes` on the store of a hub serving another folder is refused, and changes nothing', async () => {
      const r = repo();
      const hub = spawnHub({
        workspace: r.wt2,
        store: r.storeOf(r.wt2),
        socket: join(r.base, 'other', 'hub.sock'),
        env: r.env,
      });
      // A failed assertion must not leave the hub alive: its piped output would hold the file open until the runner's limit.
      try {
        await hub.ready;
        const carol = await connectAgent({
          socket: join(r.base, 'other', 'hub.sock'),
          name: 'carol',
          cwd: r.wt2,
          env: r.env,
        });
        await carol.ok('send_handoff', { to: 'carol', body: 'note' });
        await carol.close();
        const before = digest(r.storeOf(r.wt2));
        for (const how of [
          ['--store', r.storeOf(r.wt2)],
          ['--workspace', r.wt2],
        ]) {
          const out = await cli(['store', 'repair', '--yes', ...how], r.root, r.env);
          assert.equal(out.code, 1, out.stderr);
          assert.match(
            out.stderr,
            /A running hub \(pid \d+\) has .* open: stop it, then repair\. Nothing was changed\./,
          );
        }
        assert.equal(digest(r.storeOf(r.wt2)), before);
      } finally {
        await stop(hub.proc);
      }
      const after = await cli(['store', 'repair', '--yes', '--store', r.storeOf(r.wt2)], r.root, r.env);
      assert.equal(after.code, 0, after.stderr);
    });
  });
}

/** Stops a child that may have exited already (stoppable's exit promise would then never come). */
async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await exited;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function racer(store: string, go: string) {
  const proc: ChildProcess = spawn(NODE, [__filename], {
    env: { ...process.env, HANDOFF_LOCK_RACER: `${store}\n${go}` },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const lines = () => out.split('\n').filter(Boolean);
  const waiting: (() => void)[] = [];
  proc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of waiting) w();
  });
  const seen = (n: number) =>
    new Promise<string>((res, rej) => {
      const check = () => lines().length >= n && res(lines()[n - 1]);
      waiting.push(check);
      check();
      proc.once('exit', (code) => rej(new Error(`racer exited with ${code}`)));
    });
  // Ready: loaded and waiting for the start line (a racer still loading would not race).
  const ready = seen(1).then(() => undefined);
  const answer = seen(2);
  const exited = new Promise<void>((res) => proc.once('exit', () => res()));
  answer.catch(() => undefined);
  ready.catch(() => undefined);
  return { proc, answer, ready, exited };
}

function repo() {
  const base = realpathSync(tempDir('one-writer'));
  const root = join(base, 'R');
  mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'commit', '-q', '--allow-empty', '-m', 'init');
  const wt = join(base, 'wt-one');
  const wt2 = join(base, 'wt-two');
  git(root, 'worktree', 'add', '-q', '-b', 'one', wt);
  git(root, 'worktree', 'add', '-q', '-b', 'two', wt2);
  const state = join(base, 'state');
  const env = { XDG_STATE_HOME: state, HOME: join(base, 'home') };
  mkdirSync(env.HOME);
  const storeOf = (folder: string) => join(state, 'handoff', workspaceKey(folder));
  return { base, root, wt, wt2, env, storeOf };
}

function digest(dir: string): string {
  const h = createHash('sha256');
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => statSync(join(dir, f)).isFile());
  for (const f of files.sort()) h.update(f).update(readFileSync(join(dir, f)));
  return h.digest('hex');
}

function cli(args: string[], cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((res) =>
    execFile(NODE, [join(DIST, 'cli.js'), ...args], { cwd, env: { ...process.env, ...env } }, (e, stdout, stderr) =>
      res({ code: e ? ((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

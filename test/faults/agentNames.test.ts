// The repository's names file (`<git common dir>/handoff/agents.json`) with one writer and no name
// lost or shared: connects in real processes released together (this file, run as a child, is the
// racer), damage refused with a copy kept, gone worktrees dropped, a bound that is never passed
// silently, and no two agents of a repository ever given one name — recorded or derived.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { agentNameAt, agentNamesPath, recordAgentName } from '../../extension/shared/agentNames';
import { findCheckout } from '../../extension/shared/repository';
import { NODE, tempDir } from '../helpers/hubProcess';
import { git } from '../helpers/git';

const RACER = process.env.HANDOFF_NAMES_RACER;

if (RACER) {
  // A racer: waits for the start file, records its name once, and says how it went.
  const { folder, cli, name, go } = JSON.parse(RACER) as Record<string, string>;
  const spin = new Int32Array(new SharedArrayBuffer(4));
  process.stdout.write('ready\n');
  while (!existsSync(go)) Atomics.wait(spin, 0, 0, 1);
  recordAgentName(cli, name, findCheckout(folder)!).then(
    () => process.stdout.write('ok\n'),
    (e: Error) => process.stdout.write(`error ${e.message}\n`),
  );
} else {
  describe('the names file: one writer, no name lost or shared', () => {
    it('two connects in two worktrees released together, the first ones included: both names kept, no error, every round', async () => {
      const rounds = Number(process.env.HANDOFF_NAMES_ROUNDS) || 20;
      let lost = 0;
      const errors: string[] = [];
      for (let round = 0; round < rounds; round++) {
        const r = repo();
        const go = join(r.base, 'go');
        const racers = [
          racer({ folder: r.one, cli: 'claude', name: `alice-${round}`, go }),
          racer({ folder: r.two, cli: 'codex', name: `bob-${round}`, go }),
        ];
        await Promise.all(racers.map((x) => x.line(1)));
        writeFileSync(go, '');
        const answers = await Promise.all(racers.map((x) => x.line(2)));
        errors.push(...answers.filter((a) => a !== 'ok'));
        if (agentNameAt('claude', r.one)?.name !== `alice-${round}`) lost++;
        if (agentNameAt('codex', r.two)?.name !== `bob-${round}`) lost++;
      }
      assert.deepEqual(errors, [], 'no connect failed');
      assert.equal(lost, 0, `${lost} name(s) lost over ${rounds} rounds`);
    });

    it('a damaged file is refused with a clear error and a copy kept; nothing replaces it', async () => {
      const r = repo();
      await recordAgentName('claude', 'alice', findCheckout(r.one)!);
      const path = agentNamesPath(findCheckout(r.root)!.commonDir);
      const text = readFileSync(path, 'utf8');
      writeFileSync(path, text.slice(0, 4) + 'XXXX' + text.slice(8)); // 4 bytes of damage
      await assert.rejects(
        () => recordAgentName('codex', 'carol', findCheckout(r.two)!),
        /agents\.json is damaged \(not JSON .*\); nothing was changed\. A copy is kept at .*agents\.json\.damaged-/,
      );
      assert.equal(readFileSync(path, 'utf8'), text.slice(0, 4) + 'XXXX' + text.slice(8), 'the file is as it was');
      const copies = readdirSync(join(path, '..')).filter((f) => f.startsWith('agents.json.damaged-'));
      assert.equal(copies.length, 1);
      assert.equal(readFileSync(join(path, '..', copies[0]), 'utf8'), readFileSync(path, 'utf8'));
    });

    it('the entries of worktrees removed with their branches are dropped; a branch that remains keeps its name (the recycle)', async () => {
      const r = repo();
      await recordAgentName('claude', 'alice', findCheckout(r.one)!);
      await recordAgentName('claude', 'bob', findCheckout(r.two)!);
      git(r.root, 'worktree', 'remove', '--force', r.one);
      git(r.root, 'branch', '-D', 'one');
      git(r.root, 'worktree', 'remove', '--force', r.two); // branch two stays
      await recordAgentName('codex', 'carol', findCheckout(r.root)!);
      const names = (
        JSON.parse(readFileSync(agentNamesPath(findCheckout(r.root)!.commonDir), 'utf8')) as {
          agents: { name: string }[];
        }
      ).agents.map((e) => e.name);
      assert.deepEqual(names.sort(), ['bob', 'carol']);
    });

    it('past its bound a name is refused, never written without being read back', async () => {
      const r = repo();
      const common = findCheckout(r.root)!.commonDir;
      mkdirSync(join(common, 'handoff'), { recursive: true });
      const agents = Array.from({ length: 2000 }, (_, i) => ({ cli: 'claude', name: `n${i}`, main: true as const }));
      writeFileSync(agentNamesPath(common), JSON.stringify({ agents }));
      await assert.rejects(
        () => recordAgentName('codex', 'carol', findCheckout(r.one)!),
        /holds 2000 names of live checkouts, as many as it keeps/,
      );
      assert.equal(agentNameAt('codex', r.one)!.name, 'codex-one');
    });

    it('two agents of a repository never share a name: across CLIs, slugged branches, detached folders, recorded against derived', async () => {
      const r = repo();
      // Holders are checked across CLIs.
      await recordAgentName('claude', 'bob', findCheckout(r.one)!);
      await assert.rejects(
        () => recordAgentName('codex', 'bob', findCheckout(r.two)!),
        /"bob" already names the claude agent in the worktree on branch one/,
      );
      // feat/x and feat-x: the branch spelled exactly keeps the plain name, the other its own.
      const slash = join(r.base, 'slash');
      const dash = join(r.base, 'dash');
      git(r.root, 'worktree', 'add', '-q', '-b', 'feat/x', slash);
      git(r.root, 'worktree', 'add', '-q', '-b', 'feat-x', dash);
      const [a, b] = [agentNameAt('codex', slash)!.name, agentNameAt('codex', dash)!.name];
      assert.equal(b, 'codex-feat-x');
      assert.match(a, /^codex-feat-x-[0-9a-f]{8}$/);
      // Two detached worktrees in folders both called tmp.
      const t1 = join(r.base, 'a', 'tmp');
      const t2 = join(r.base, 'b', 'tmp');
      git(r.root, 'worktree', 'add', '-q', '--detach', t1);
      git(r.root, 'worktree', 'add', '-q', '--detach', t2);
      const [d1, d2] = [agentNameAt('codex', t1)!.name, agentNameAt('codex', t2)!.name];
      assert.notEqual(d1, d2);
      // A recorded name equal to another checkout's derived one: refused before any file changes.
      const before = readFileSync(agentNamesPath(findCheckout(r.root)!.commonDir), 'utf8');
      await assert.rejects(
        () => recordAgentName('codex', 'codex-two', findCheckout(r.root)!),
        /"codex-two" is the name the codex agent in the worktree .*two has \(derived, unrecorded\)/,
      );
      assert.equal(readFileSync(agentNamesPath(findCheckout(r.root)!.commonDir), 'utf8'), before);
      // And a derived name never equals a recorded one: a worktree made after the recording gets its own.
      await recordAgentName('gemini', 'gemini-later', findCheckout(r.root)!);
      const later = join(r.base, 'later');
      git(r.root, 'worktree', 'add', '-q', '-b', 'later', later);
      assert.match(agentNameAt('gemini', later)!.name, /^gemini-later-[0-9a-f]{8}$/);
    });
  });
}

function racer(spec: Record<string, string>) {
  const proc = spawn(NODE, [__filename], {
    env: { ...process.env, HANDOFF_NAMES_RACER: JSON.stringify(spec) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const waiting: (() => void)[] = [];
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of waiting) w();
  });
  const line = (n: number) =>
    new Promise<string>((res, rej) => {
      const check = () => {
        const lines = out.split('\n').filter(Boolean);
        if (lines.length >= n) res(lines[n - 1]);
      };
      waiting.push(check);
      check();
      proc.once('exit', (code) => rej(new Error(`racer exited with ${code}: ${out}`)));
    });
  return { proc, line };
}

function repo() {
  const base = realpathSync(tempDir('names'));
  const root = join(base, 'R');
  mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'commit', '-q', '--allow-empty', '-m', 'init');
  const one = join(base, 'one');
  const two = join(base, 'two');
  git(root, 'worktree', 'add', '-q', '-b', 'one', one);
  git(root, 'worktree', 'add', '-q', '-b', 'two', two);
  assert.ok(statSync(one).isDirectory());
  return { base, root, one, two };
}

// Two real VS Code windows (two VS Code servers, each driven by Chromium), one on a repository's
// main checkout and one on a linked worktree of it: one hub, one store, one bus. The worktree's
// window finds the main checkout's hub and uses it; agents in either checkout reach each other.
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import { handoffLog } from './handoffLog';
import { connectAgent, waitFor } from '../helpers/agent';
import { ROOT, tempDir } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runVsCode, statusBarItem } from '../vscode/harness.mjs';
import { hubProcesses, hubSocket } from '../vscode/processes';
import { git } from '../helpers/git';

const missing = vscodeMissing();
announce('the two-windows-on-one-repository end-to-end test', missing);

describe('two windows on one repository in a real VS Code', () => {
  itNeeds(
    missing,
    'a window on the main checkout and one on a worktree share one hub and one bus',
    { timeout: 240_000 },
    async () => {
      const base = realpathSync(tempDir('two-windows'));
      const repo = join(base, 'R');
      mkdirSync(repo);
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'commit', '-q', '--allow-empty', '-m', 'init');
      const worktree = join(base, 'R.worktrees', 'feature');
      git(repo, 'worktree', 'add', '-q', '-b', 'feature', worktree);

      // Two windows of one VS Code share its environment, so its runtime folder: given to both servers.
      const runtime = join(base, 'runtime');
      mkdirSync(runtime, { mode: 0o700 });
      const env = { XDG_RUNTIME_DIR: runtime };
      let checked = false;
      const first = await runVsCode({
        extensionPath: ROOT,
        workspace: repo,
        env,
        timeoutMs: 200_000,
        onPage: async (page) => {
          await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
          const socket = await hubSocket(repo);
          const second = await runVsCode({
            extensionPath: ROOT,
            workspace: worktree,
            env,
            timeoutMs: 120_000,
            onPage: async (page2, ctx2) => {
              await statusBarItem(page2, 'Handoff').first().waitFor({ timeout: 30_000 });
              await waitFor(
                () => /The Handoff hub runs in another window \(pid \d+\)/.test(handoffLog(ctx2.tempDir)),
                30_000,
                () => `the worktree window's log says it uses the running hub:\n${handoffLog(ctx2.tempDir)}`,
              );
              const log2 = handoffLog(ctx2.tempDir);
              assert.match(log2, new RegExp(`workspace ${repo}, store \\S+, socket ${socket}`), log2);
              assert.equal(hubProcesses(worktree).length, 0, 'the worktree window started no hub of its own');
              assert.equal(hubProcesses(repo).length, 1, 'one hub');
              // Agents in the worktree and the main checkout, each finding the hub from its folder.
              const bob = await connectAgent({ socket: '', name: 'bob', cwd: worktree, env });
              const alice = await connectAgent({ socket: '', name: 'alice', cwd: repo, env });
              try {
                const sent = await alice.ok('send_handoff', { to: 'bob', body: 'from the main checkout' });
                assert.equal(sent.state, 'pushed');
                await bob.waitForPushes(1);
                assert.equal(bob.pushes.length, 1);
              } finally {
                await alice.close();
                await bob.close();
              }
              checked = true;
            },
          });
          assert.equal(second.error, undefined, `${second.error?.stack}\n${second.logs.slice(-3000)}`);
        },
      });
      assert.equal(first.error, undefined, `${first.error?.stack}\n${first.logs.slice(-3000)}`);
      assert.ok(checked, 'the second window ran its checks');
    },
  );
});

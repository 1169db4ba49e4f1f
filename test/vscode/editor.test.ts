// Runs the extension in a real VS Code (the VS Code server from the code-server package, in
// headless Chromium): the extension-host mocha suites, and closing the window. Skips loudly, never
// silently, when the VS Code server is not installed; fails instead under CI=true.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import { workspaceKey } from '../../extension/shared/paths';
import { connectAgent } from '../helpers/agent';
import { ROOT, startHub } from '../helpers/hubProcess';
import { tempDir } from '../helpers/tempDir';
import { waitUntil } from '../helpers/wait';
import { runCommand, runVsCode, statusBarItem, webviewFrame, type RunResult } from './harness.mjs';
import { alive, hubProcesses, type HubProc } from './processes';
import { synapse, user, type Synapse } from '../matrix/world';
import { announce, itNeeds, strict, synapseMissing, vscodeMissing } from '../helpers/tools.mjs';

const missing = vscodeMissing();
announce('the VS Code editor suites', missing);

/** The extension host's console output (mocha's report) and anything that went wrong. */
function report(res: RunResult): string {
  return res.logs
    .split('\n')
    .filter(
      (l) =>
        /\[(exthost|workbench):|\[harness\]|\[pageerror\]|Handoff|handoff hub/.test(l) && !/builtin extensions/.test(l),
    )
    .join('\n');
}

describe('Handoff in a real VS Code', () => {
  itNeeds(missing, 'extension-host suites pass', { timeout: 240_000 }, async () => {
    // The Matrix suite needs a real homeserver: one Synapse for this run, if installed (else it skips
    // loudly, or fails under CI=true).
    let hs: Synapse | undefined;
    let matrix: Record<string, string> = {};
    const noSynapse = synapseMissing();
    if (!noSynapse) {
      hs = await synapse();
      const editor = await user(hs, 'editor');
      matrix = {
        HANDOFF_TEST_MATRIX: JSON.stringify({
          homeserver: hs.url,
          serverName: hs.serverName,
          user: 'editor',
          password: editor.password,
          userId: editor.userId,
        }),
      };
    } else {
      console.error(
        `\n*** The Matrix extension-host test will ${strict() ? 'fail (CI=true)' : 'skip'}: ${noSynapse} ***\n`,
      );
    }
    const res = await runVsCode({
      extensionPath: ROOT,
      testsPath: join(ROOT, 'out', 'test', 'vscode', 'suite', 'index.js'),
      // A fast SLA tick so a 1 s SLA lapses promptly; Codex's config goes to a temp dir.
      // The real claude CLI (a devDependency) writes its config to a temp dir.
      env: {
        HANDOFF_TICK_MS: '200',
        // A person who left the agent's terminal 1.5 s ago is gone (10 s in use).
        HANDOFF_WAKE_QUIET_MS: '1500',
        CODEX_HOME: tempDir('codex'),
        CLAUDE_CONFIG_DIR: tempDir('claude'),
        // The extension keeps its `handoff` and Node launchers there: never the developer's own.
        XDG_DATA_HOME: tempDir('data'),
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        ...matrix,
      },
      userSettings: { 'handoff.claudeCommand': join(ROOT, 'node_modules', '.bin', 'claude') },
      timeoutMs: 200_000,
    }).finally(() => hs?.stop());
    const out = report(res);
    // mocha's spec report, as the extension host printed it.
    const mochaLines = out
      .split('\n')
      .filter((l) => /\[(exthost|workbench):\w+\] /.test(l))
      .map((l) => l.replace(/^.*\[(exthost|workbench):\w+\] /, '    '));
    console.log(
      mochaLines
        .filter((l) => /✔|passing|failing|pending|SKIPPING|^\s+\d+\) |^\s+(AssertionError|Error)/.test(l))
        .join('\n'),
    );
    assert.equal(res.timedOut, false, `the suite timed out:\n${out}`);
    assert.equal(res.exitCode, 0, `the suite failed:\n${out}`);
  });

  itNeeds(
    missing,
    'a reload keeps one hub on the same socket; closing the window leaves no hub process and no socket',
    { timeout: 120_000 },
    async () => {
      let facts: HubProc | undefined;
      const res = await runVsCode({
        extensionPath: ROOT,
        // The server keeps a disconnected window's extension host for this grace time (default 3 h).
        serverArgs: ['--reconnection-grace-time', '1'],
        timeoutMs: 100_000,
        onPage: async (page, ctx) => {
          await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
          let hubs: HubProc[] = [];
          await waitUntil(
            () => (hubs = hubProcesses(ctx.workspace)).length > 0 && existsSync(hubs[0].socket),
            20_000,
            () => `a running hub with a socket for ${ctx.workspace}: ${JSON.stringify(hubs)}`,
            100,
          );
          assert.equal(hubs.length, 1, 'exactly one hub for the window');
          const first = hubs[0];
          const pids0 = first.pid;

          // Reload: the old hub goes with the old extension host, a new one takes the same socket.
          await runCommand(page, 'Developer: Reload Window');
          await waitUntil(
            () =>
              (hubs = hubProcesses(ctx.workspace)).length === 1 && hubs[0].pid !== pids0 && existsSync(hubs[0].socket),
            40_000,
            () => `one new hub after a reload: ${JSON.stringify(hubs)} (before: ${pids0})`,
            100,
          );
          await page
            .locator(
              '#workbench\\.parts\\.statusbar .statusbar-item[aria-label^="Handoff: everything is acknowledged"]',
            )
            .waitFor({ timeout: 30_000 });
          facts = hubs[0];
          const { pid, socket } = facts;
          assert.equal(socket, first.socket, 'HANDOFF_HUB stays the same across reloads');
          await page.close();
          await waitUntil(
            () => !alive(pid) && !existsSync(socket),
            30_000,
            () =>
              `the hub gone after closing the window: hub ${pid} alive=${alive(pid)}, socket exists=${existsSync(socket)}`,
            100,
          );
        },
      });
      assert.equal(res.exitCode, 0, `${res.error?.stack ?? ''}\n${report(res)}`);
      assert.ok(facts, 'the hub was found before closing');
    },
  );

  itNeeds(
    missing,
    'uses a hub started outside the window, and starts its own when that one stops',
    { timeout: 120_000 },
    async () => {
      // A headless hub on the socket the window will derive (same runtime dir, same folder).
      const base = tempDir('shared');
      const runtime = join(base, 'run');
      const workspace = join(base, 'ws');
      const uid = process.getuid?.() ?? 0;
      const socket = join(runtime, `handoff-${uid}`, `hub-${workspaceKey(workspace)}.sock`);
      const { mkdirSync, realpathSync } = await import('node:fs');
      mkdirSync(runtime, { recursive: true });
      mkdirSync(workspace, { recursive: true });
      const headless = await startHub({ workspace: realpathSync(workspace), socket });
      let own: HubProc | undefined;
      try {
        const res = await runVsCode({
          extensionPath: ROOT,
          workspace: realpathSync(workspace),
          env: { XDG_RUNTIME_DIR: runtime },
          timeoutMs: 100_000,
          onPage: async (page, ctx) => {
            await page
              .locator(
                '#workbench\\.parts\\.statusbar .statusbar-item[aria-label^="Handoff: everything is acknowledged"]',
              )
              .waitFor({ timeout: 30_000 });
            await runCommand(page, 'Handoff: Show Panel');
            const frame = await webviewFrame(
              page,
              (f) =>
                f
                  .locator('.hub-text')
                  .count()
                  .then((n) => n > 0),
              30_000,
            );
            await frame.locator('.hub-text', { hasText: `(pid ${headless.proc.pid})` }).waitFor();
            assert.deepEqual(
              hubProcesses(ctx.workspace).map((h) => h.pid),
              [headless.proc.pid],
              'the window started no second hub',
            );
            const agent = await connectAgent({ socket, name: 'night-shift' });
            await agent.ok('send_handoff', { to: 'night-shift', body: 'note to self from the headless hub' });
            await frame.locator('article.event .preview', { hasText: 'note to self from the headless hub' }).waitFor();
            await agent.close();

            await headless.stop();
            own = await waitUntil(
              () => {
                const h = hubProcesses(ctx.workspace).find((x) => x.pid !== headless.proc.pid);
                return h && existsSync(h.socket) && h;
              },
              30_000,
              'the window to start its own hub after the shared one stopped',
              100,
            );
            assert.equal(own.socket, socket);
            await frame.locator('.hub-text', { hasText: `pid ${own.pid}` }).waitFor({ timeout: 15_000 });
            assert.doesNotMatch(await frame.locator('.hub-text').innerText(), /shared/);
          },
        });
        assert.equal(res.exitCode, 0, `${res.error?.stack ?? ''}\n${report(res)}`);
      } finally {
        await headless.stop();
      }
    },
  );
});

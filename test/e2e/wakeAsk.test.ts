// handoff.wakeIdleAgents "ask" in a real VS Code in a real browser: an idle Codex-shaped agent (the
// stand-in CLI: the real bridge and hook program) gets a handoff, and the window asks its person
// before anything is typed. The notification is clicked as a person would ("Not now"); nothing is
// typed, and the answer is logged. Screenshots of the question in a light and a dark theme go to
// .test-artifacts/e2e/.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import { handoffLog } from './handoffLog';
import { connectAgent } from '../helpers/agent';
import { NODE, ROOT, tempDir } from '../helpers/hubProcess';
import { runCommand, runVsCode, statusBarItem } from '../vscode/harness.mjs';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { hubSocket } from '../vscode/processes';
import { waitFor, waitUntil } from '../helpers/wait';

const missing = vscodeMissing();
announce('the wake question end-to-end test', missing);

const ARTIFACTS = join(ROOT, '.test-artifacts', 'e2e');
const THEMES = [
  { name: 'light', theme: 'Default Light Modern' },
  { name: 'dark', theme: 'Default Dark Modern' },
];

describe('handoff.wakeIdleAgents "ask" in a real VS Code', () => {
  for (const t of THEMES) {
    itNeeds(
      missing,
      `the person is asked before an idle agent is woken — ${t.name} theme`,
      { timeout: 150_000 },
      async () => {
        mkdirSync(ARTIFACTS, { recursive: true });
        const cliLog = join(tempDir('ask'), 'cli.log');
        const lines = () =>
          existsSync(cliLog)
            ? readFileSync(cliLog, 'utf8')
                .split('\n')
                .filter(Boolean)
                .map((l) => JSON.parse(l) as { ready?: number; line?: string })
            : [];
        let log = '';
        const res = await runVsCode({
          extensionPath: ROOT,
          userSettings: {
            'workbench.colorTheme': t.theme,
            'handoff.identity': 'maria',
            'handoff.wakeIdleAgents': 'ask',
          },
          viewport: { width: 1280, height: 800 },
          timeoutMs: 120_000,
          onPage: async (page, ctx) => {
            await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
            const socket = await hubSocket(ctx.workspace);
            // bob: an idle Codex-shaped agent outside any terminal of this window (its wake would find none).
            const bob = spawn(NODE, [join(ROOT, 'test', 'vscode', 'standInCli.mjs'), ROOT, cliLog, 'bob'], {
              env: { ...process.env, HANDOFF_HUB: socket },
              stdio: ['pipe', 'ignore', 'ignore'],
            });
            try {
              await waitFor(() => lines().some((e) => e.ready), 30_000, 'bob connected through the bridge');
              const alice = await connectAgent({ socket, name: 'alice' });
              // The window says who sits at it (and its setting) once its hub runs.
              await waitUntil(
                async () => (await alice.ok('list_peers')).peers.some((p: any) => p.identity === 'maria' && p.person),
                30_000,
                'maria in list_peers',
              );
              const sent = await alice.ok('send_handoff', { to: 'bob', body: 'Please rebase the release branch.' });
              assert.equal(sent.recipients[0].seen_when, 'next_turn', 'with "ask" a wake is not promised');
              await alice.close();
              // Toasts of a page that just loaded are not always drawn: the notification centre lists it.
              await runCommand(page, 'Notifications: Show Notifications');
              const item = page
                .locator('.notifications-center .notification-list-item')
                .filter({ hasText: 'is idle with a handoff from alice' });
              await item.first().waitFor({ timeout: 20_000 });
              const text = (await item.first().locator('.notification-list-item-message').innerText()).replace(
                /\u200b/g,
                '',
              );
              assert.equal(
                text,
                'bob (Codex) is idle with a handoff from alice. Wake it by typing a line into its editor terminal?',
              );
              assert.deepEqual(await item.first().locator('.monaco-button').allInnerTexts(), ['Wake', 'Not now']);
              await page
                .locator('.notifications-center')
                .screenshot({ path: join(ARTIFACTS, `${t.name}-wake-ask.png`), animations: 'disabled' });
              await item.first().locator('.monaco-button', { hasText: 'Not now' }).click();
              // The window logs the answer, then the hub its decision once the answer reached it.
              await waitFor(
                () => /asked whether to wake bob \(codex\): Not now[^]*did not wake bob/.test(handoffLog(ctx.tempDir)),
                20_000,
                "the answer and the hub's decision logged",
              );
              log = handoffLog(ctx.tempDir);
            } finally {
              bob.kill();
            }
          },
        });
        assert.equal(res.error, undefined, `${res.error?.stack}\n${res.logs.slice(-3000)}`);
        assert.deepEqual(
          lines().filter((e) => e.line !== undefined),
          [],
          'nothing typed after "Not now"',
        );
        assert.match(log, /did not wake bob \(codex\): the person said not now/);
      },
    );
  }
});

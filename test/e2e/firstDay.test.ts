// What a new user's first day showed in the view, in a real VS Code on a hub started with
// `handoff hub` (light, dark and high contrast): the header says the hub runs as `handoff hub` and
// what that means (not "in another window", which there was none of) and fits its panel (no
// horizontal scrollbar); a receipt row names its recipient once ("bob ACK · bob" did twice); the
// screen reader's status tells ACKed handoffs waiting for a result from ones waiting for an ACK;
// and "Get Started with Handoff" in the palette opens Handoff's walkthrough, not VS Code's
// Accessibility one. Sidebar screenshots in .test-artifacts/e2e/<theme>-headless-hub.png.
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { workspaceKey } from '../../extension/shared/paths';
import { connectAgent, type Agent } from '../helpers/agent';
import { ROOT, startHub, tempDir } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { waitUntil } from '../helpers/wait';
import { runCommand, runVsCode, statusBarItem, webviewFrame } from '../vscode/harness.mjs';
import { themeApplied, watchForScript } from './workbench';

const missing = vscodeMissing();
announce('the first-day end-to-end test', missing);

const ARTIFACTS = join(ROOT, '.test-artifacts', 'e2e');
const THEMES = [
  { name: 'light', theme: 'Light 2026', workbenchClass: /\bvs\b/ },
  { name: 'dark', theme: 'Dark 2026', workbenchClass: /\bvs-dark\b/ },
  { name: 'high-contrast', theme: 'Default High Contrast', workbenchClass: /\bhc-black\b/ },
];

async function panelFrame(page: Page): Promise<Frame> {
  await runCommand(page, 'Handoff: Focus on Handoff View');
  return webviewFrame(
    page,
    (f) =>
      f
        .locator('.hub-text')
        .count()
        .then((n) => n > 0),
    30_000,
  );
}

describe('The first day, in a real VS Code on a headless hub', () => {
  THEMES.forEach((t, i) =>
    itNeeds(missing, `says what is true and fits its panel — ${t.name} theme`, { timeout: 200_000 }, async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      // A headless hub on the socket the window will derive (same runtime dir, same folder).
      const base = tempDir('first-day');
      const runtime = join(base, 'run');
      const workspace = join(base, 'ws');
      mkdirSync(runtime, { recursive: true });
      mkdirSync(workspace, { recursive: true });
      const socket = join(runtime, `handoff-${process.getuid?.() ?? 0}`, `hub-${workspaceKey(workspace)}.sock`);
      const headless = await startHub({ workspace: realpathSync(workspace), socket });
      const agents: Agent[] = [];
      const cspViolations: string[] = [];
      const dialogs: string[] = [];
      try {
        const res = await runVsCode({
          extensionPath: ROOT,
          workspace: realpathSync(workspace),
          userSettings: { 'workbench.colorTheme': t.theme, 'handoff.identity': 'maria' },
          env: { XDG_RUNTIME_DIR: runtime },
          timeoutMs: 170_000,
          onPage: async (page) => {
            watchForScript(page, cspViolations, dialogs);
            await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
            await themeApplied(page, t);
            const frame = await panelFrame(page);
            const hubText = frame.locator('.hub-text', { hasText: `(pid ${headless.proc.pid})` });
            await hubText.waitFor({ timeout: 30_000 });
            const said = await hubText.innerText();
            assert.match(said, /runs as the command “handoff hub” \(pid \d+\), outside VS Code/);
            assert.match(said, /ACK and results for your inbox need a hub VS Code runs/);
            assert.doesNotMatch(said, /another window/);

            // It fits a panel as narrow as the new user's (282 px): no page wider than the panel.
            const width = () =>
              frame.evaluate(() => {
                const d = document.documentElement;
                const out = Array.from(document.querySelectorAll('body *'))
                  .filter((e) => e.getBoundingClientRect().right > d.clientWidth + 0.5)
                  .map(
                    (e) => `${e.tagName.toLowerCase()}.${e.className}: ${Math.round(e.getBoundingClientRect().right)}`,
                  );
                return { scroll: d.scrollWidth, client: d.clientWidth, out: out.slice(0, 8) };
              });
            // Narrowed by the sash between the sidebar and the editor, as a person drags it.
            for (let k = 0; k < 5 && (await width()).client > 282; k++) {
              const sash = await page.locator('.monaco-sash.vertical').evaluateAll(
                (all) =>
                  all
                    .map((s) => s.getBoundingClientRect())
                    .filter((r) => r.height > 300 && r.x > 150 && r.x < 600)
                    .map((r) => ({ x: r.x + r.width / 2, y: r.y + r.height / 2 }))
                    .sort((a, b) => a.x - b.x)[0],
              );
              assert.ok(sash, 'the sidebar’s sash');
              await page.mouse.move(sash.x, sash.y);
              await page.mouse.down();
              await page.mouse.move(sash.x - ((await width()).client - 280), sash.y, { steps: 5 });
              await page.mouse.up();
            }
            const empty = await width();
            assert.ok(empty.client <= 282, `the panel narrowed to ${empty.client} px`);
            await page
              .locator('#workbench\\.parts\\.sidebar')
              .screenshot({ path: join(ARTIFACTS, `${t.name}-headless-hub-empty.png`), animations: 'disabled' });
            // The sentence is read whole at that width, not cut to "runs as the co…".
            const cut = await hubText.evaluate(
              (e) => e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight + 1,
            );
            assert.equal(cut, false, 'the header line shown whole');
            assert.ok(
              empty.scroll <= empty.client,
              `the empty view is ${empty.scroll} px wide in a ${empty.client} px panel: ${empty.out.join('; ')}`,
            );
            // Four handoffs to bob, each ACKed and waiting for its result.
            const alice = await connectAgent({ socket, name: 'alice' });
            const bob = await connectAgent({ socket, name: 'bob' });
            agents.push(alice, bob);
            for (let k = 1; k <= 4; k++) {
              const sent = await alice.ok('send_handoff', { to: 'bob', body: `first-day task ${k}` });
              await bob.ok('ack', { message_id: sent.message_id });
            }
            const status = frame.locator('.announcer');
            await waitUntil(
              async () => /0 waiting for an ACK, 4 ACKed, waiting for a result/.test(await status.innerText()),
              30_000,
              'the status to say the four are ACKed and wait for a result',
            );
            const row = frame.locator('article.event', { hasText: 'first-day task 4' }).locator('.receipt').first();
            await row.waitFor({ timeout: 15_000 });
            assert.match(await row.locator('.label').innerText(), /^ACK · \d\d:\d\d:\d\d$/);
            assert.equal((await row.innerText()).match(/\bbob\b/g)?.length, 1, 'bob named once on his row');

            const w = await width();
            assert.ok(
              w.scroll <= w.client,
              `the view is ${w.scroll} px wide in a ${w.client} px panel: ${w.out.join('; ')}`,
            );
            await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
            await page
              .locator('#workbench\\.parts\\.sidebar')
              .screenshot({ path: join(ARTIFACTS, `${t.name}-headless-hub.png`), animations: 'disabled' });

            if (i === 0) {
              // The phrase a person types finds Handoff's own walkthrough.
              await runCommand(page, 'Get Started with Handoff');
              await page
                .locator('.gettingStartedContainer')
                .filter({ hasText: 'Connect your agents, hand work between them' })
                .first()
                .waitFor({ timeout: 30_000 });
              await page.screenshot({ path: join(ARTIFACTS, `${t.name}-walkthrough.png`), animations: 'disabled' });
            }
          },
        });
        assert.equal(res.error, undefined, `${res.error?.stack}\n${res.logs.slice(-3000)}`);
        assert.deepEqual(cspViolations, []);
        assert.deepEqual(dialogs, []);
      } finally {
        await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
        await headless.stop();
      }
    }),
  );
});

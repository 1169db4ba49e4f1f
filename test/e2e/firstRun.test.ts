// A first run, in a real VS Code (the VS Code server, driven by Playwright in headless Chromium):
// the unread count is on the Handoff icon before the Handoff view was ever opened, Ctrl+Alt+H
// opens the inbox, the walkthrough opens with its four steps and their pages, and the view shows
// handoffs with receipts. Screenshots, dark then light, go to .test-artifacts/e2e/first-run/; with
// HANDOFF_DOCS_SCREENSHOTS=1, cropped copies go to docs/images/ (what docs/marketplace.md shows).
// Skips loudly without the VS Code server (fails under CI=true).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { connectAgent, type Agent } from '../helpers/agent';
import { ROOT } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runCommand, runVsCode, statusBarItem, webviewFrame } from '../vscode/harness.mjs';
import { hubSocket } from '../vscode/processes';
import { pickTheme, runFailure } from './workbench';

const missing = vscodeMissing();
announce('the first-run end-to-end test', missing);

const ARTIFACTS = join(ROOT, '.test-artifacts', 'e2e', 'first-run');
const DOCS = process.env.HANDOFF_DOCS_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'images') : undefined;
const THEMES = [
  { name: 'dark', theme: 'Dark Modern', label: 'Dark Modern', workbenchClass: /\bvs-dark\b/ },
  { name: 'light', theme: 'Light Modern', label: 'Light Modern', workbenchClass: /\bvs\b(?!-)/ },
];

/** The Handoff icon in the activity bar. */
function handoffIcon(page: Page): Locator {
  return page
    .locator('#workbench\\.parts\\.activitybar .action-item')
    .filter({ has: page.locator('.action-label[aria-label^="Handoff"]') });
}

async function shot(page: Page, locator: Locator | undefined, name: string, clip?: Clip): Promise<void> {
  const file = `${name}.png`;
  const paths = [join(ARTIFACTS, file), ...(DOCS ? [join(DOCS, file)] : [])];
  // Animations (a palette's fade-out, the walkthrough's step list expanding) are run to their end.
  for (const path of paths) {
    if (locator) await locator.screenshot({ path, animations: 'disabled' });
    else await page.screenshot({ path, clip, animations: 'disabled' });
  }
}
type Clip = { x: number; y: number; width: number; height: number };

describe('A first run of Handoff in a real VS Code', () => {
  itNeeds(
    missing,
    'badge from activation, Ctrl+Alt+H, walkthrough, view — dark and light',
    { timeout: 240_000 },
    async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      if (DOCS) mkdirSync(DOCS, { recursive: true });
      const agents: Agent[] = [];
      const res = await runVsCode({
        extensionPath: ROOT,
        userSettings: {
          'workbench.colorTheme': 'Default Dark Modern',
          'handoff.identity': 'maria',
          'handoff.defaultSlaSeconds': 900,
        },
        viewport: { width: 1280, height: 760 },
        timeoutMs: 210_000,
        onPage: async (page, ctx) => {
          await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
          const socket = await hubSocket(ctx.workspace);
          const builder = await connectAgent({ socket, name: 'builder', session: 'builder-1' });
          const reviewer = await connectAgent({ socket, name: 'reviewer', session: 'reviewer-1' });
          agents.push(builder, reviewer);
          const review = await builder.ok('send_handoff', {
            to: 'reviewer',
            body: 'Review PR #12: the parser now streams tokens; check the error paths.',
            sla_seconds: 600,
          });
          await reviewer.waitForPushes(1);
          await reviewer.ok('ack', { message_id: review.message_id });
          const fix = await reviewer.ok('send_handoff', {
            to: 'builder',
            body: 'Two error paths swallow the cause: wrap them and add a test each.',
            sla_seconds: 600,
          });
          await builder.waitForPushes(1);
          await builder.ok('mark_read', { message_id: fix.message_id });
          await builder.ok('send_handoff', {
            to: 'maria',
            body: 'The release branch is green: approve the deploy?',
            sla_seconds: 600,
          });
          await reviewer.ok('send_handoff', {
            to: 'maria',
            body: 'PR #12 needs a product call on the token limit.',
            sla_seconds: 600,
          });

          // The count is on the icon while the Handoff view has never been shown in this window.
          const badge = handoffIcon(page).locator('.badge .badge-content');
          await badge.filter({ hasText: /^2$/ }).waitFor({ timeout: 20_000 });
          assert.equal(
            page.frames().filter((f) => /webview\/browser\/pre\//.test(f.url())).length,
            0,
            'no webview was resolved yet: the badge came without the view',
          );
          assert.match((await statusBarItem(page, 'Handoff').first().innerText()).replace(/\s+/g, ' '), /2/);

          // Ctrl+Alt+H opens the inbox.
          await page
            .locator('.monaco-workbench')
            .click({ position: { x: 5, y: 5 } })
            .catch(() => {});
          await page.keyboard.press('Control+Alt+H');
          const inbox = page.locator('.quick-input-widget').filter({ hasText: 'Handoff inbox of maria' });
          await inbox.waitFor({ timeout: 10_000 });
          assert.equal(await inbox.locator('.monaco-list-row').count(), 2, 'both unread handoffs are listed');
          await page.keyboard.press('Escape');
          await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });

          for (const t of THEMES) {
            if (t.name !== 'dark') await pickTheme(page, t);
            await runCommand(page, 'Notifications: Clear All Notifications');
            await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });

            // The activity bar with the Handoff icon and its badge (the Explorer is what is open).
            await runCommand(page, 'View: Show Explorer');
            await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
            await page.locator('#workbench\\.view\\.explorer').waitFor({ state: 'visible' });
            // Still the count once the view has been shown: the editor adds up a container's view badges.
            assert.equal(await badge.innerText(), '2', 'one badge, not the view and the icon added up');
            const icon = await handoffIcon(page).boundingBox();
            assert.ok(icon, 'the Handoff icon is in the activity bar');
            await handoffIcon(page).hover();
            await page
              .locator('.monaco-hover, .workbench-hover')
              .filter({ hasText: '2 unread handoffs for maria' })
              .first()
              .waitFor({ timeout: 10_000 });
            await shot(page, undefined, `activitybar-${t.name}`, {
              x: 0,
              y: 0,
              width: Math.round(icon.x + icon.width + 260),
              height: Math.round(icon.y + icon.height + 8),
            });

            // The walkthrough, from Welcome: Open Walkthrough… (wide enough to show its pages).
            await page.mouse.move(640, 400);
            await runCommand(page, 'View: Close Primary Side Bar');
            await runCommand(page, 'Welcome: Open Walkthrough');
            await page.locator('.quick-input-widget input').fill('Handoff');
            await page
              .locator('.quick-input-widget .monaco-list-row')
              .filter({ hasText: 'Get Started with Handoff' })
              .first()
              .waitFor();
            await page.keyboard.press('Enter');
            const walkthrough = page.locator('.gettingStartedContainer');
            await walkthrough.locator('.getting-started-step').first().waitFor({ timeout: 15_000 });
            for (const step of ['Connect an agent', 'Send a handoff', 'See its receipts', 'Open your inbox'])
              await walkthrough.locator('.getting-started-step', { hasText: step }).first().waitFor();
            // The first step's page: the markdown media, rendered in its own webview.
            const media = await webviewFrame(
              page,
              (f) =>
                f
                  .locator('h1', { hasText: 'Connect an agent' })
                  .count()
                  .then((n) => n > 0),
              20_000,
            );
            assert.match(await media.locator('body').innerText(), /(?<!npx )handoff connect claude --name reviewer/);
            await shot(page, page.locator('#workbench\\.parts\\.editor'), `walkthrough-${t.name}`);
            await runCommand(page, 'View: Close All Editors');

            // The Handoff view with handoffs and their receipts.
            await runCommand(page, 'Handoff: Focus on Handoff View');
            const frame = await webviewFrame(
              page,
              (f) =>
                f
                  .locator(`article.event[data-id="${review.message_id}"] .receipt[data-state="acked"]`)
                  .count()
                  .then((n) => n > 0),
              30_000,
            );
            await frame.locator('.inbox-row').first().waitFor();
            await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
            await shot(page, page.locator('#workbench\\.parts\\.sidebar'), `view-${t.name}`);
          }

          // Reading one takes it off the count.
          await page
            .locator('.monaco-workbench')
            .click({ position: { x: 5, y: 5 } })
            .catch(() => {});
          await page.keyboard.press('Control+Alt+H');
          await inbox.locator('.monaco-list-row').first().waitFor();
          await page.keyboard.press('Enter');
          await page.locator('.quick-input-widget input[placeholder="What do you do with it?"]').waitFor();
          await page.keyboard.press('Enter'); // Open: writes maria's read receipt
          await badge.filter({ hasText: /^1$/ }).waitFor({ timeout: 15_000 });
        },
      });
      await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
      assert.equal(res.exitCode, 0, runFailure(res));
    },
  );
});

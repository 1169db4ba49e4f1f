// Playwright end to end, in headless Chromium against a real VS Code (the VS Code server): real
// agents hand off over the real bridge while the person watches the Handoff view, sends from the
// command palette, and sees the status bar warn. Screenshots in a light and a dark theme go to
// .test-artifacts/e2e/. Skips loudly when the VS Code server is not installed (fails under CI=true).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { connectAgent, waitFor, type Agent } from '../helpers/agent';
import { runHook } from '../helpers/hook';
import { ROOT, tempDir } from '../helpers/hubProcess';
import { runCommand, runVsCode, statusBarItem, webviewFrame } from '../vscode/harness.mjs';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { hubSocket } from '../vscode/processes';
import { waitUntil } from '../helpers/wait';
import { sessionLabel } from '../../extension/hub/sessions';

const missing = vscodeMissing();
announce('the VS Code end-to-end tests', missing);

const ARTIFACTS = join(ROOT, '.test-artifacts', 'e2e');
const XSS = '<img src=x onerror=alert(1)>';
const THEMES = [
  { name: 'light', theme: 'Default Light Modern', workbenchClass: /\bvs\b/ },
  { name: 'dark', theme: 'Default Dark Modern', workbenchClass: /\bvs-dark\b/ },
  { name: 'high-contrast', theme: 'Default High Contrast', workbenchClass: /\bhc-black\b/ },
];

async function panelFrame(page: Page): Promise<Frame> {
  await runCommand(page, 'Handoff: Show Panel');
  return webviewFrame(
    page,
    (f) =>
      f
        .locator('#events-list')
        .count()
        .then((n) => n > 0),
    30_000,
  );
}

/** Notifications matching `text`, read from the notification center (headless windows show no toasts). */
async function notifications(page: Page, text: string | RegExp) {
  await runCommand(page, 'Notifications: Show Notifications');
  const items = page.locator('.notifications-center .notification-list-item').filter({ hasText: text });
  await items.first().waitFor({ timeout: 30_000 });
  return items;
}

/** "Handoff: Send Handoff…" from F1: pick the recipient, type the body, read the honest result. */
async function sendFromPalette(page: Page, to: string, body: string, outcome: RegExp = /stored and/): Promise<string> {
  await runCommand(page, 'Handoff: Send Handoff…');
  const input = page.locator('.quick-input-widget input');
  await page.locator('.quick-input-widget .monaco-list-row').first().waitFor();
  await input.fill(to);
  await page.locator('.quick-input-widget .monaco-list-row.focused').filter({ hasText: to }).first().waitFor();
  await page.keyboard.press('Enter');
  await page
    .locator('.quick-input-widget')
    .filter({ hasText: `Send Handoff to ${to}` })
    .waitFor();
  await input.fill(body);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  try {
    const toast = (await notifications(page, outcome)).first();
    return (await toast.innerText()).replace(/\s+/g, ' ');
  } catch (e) {
    const seen = await page.locator('.notification-list-item').allInnerTexts();
    await page.screenshot({ path: join(ARTIFACTS, `send-failed-${Date.now()}.png`) });
    throw new Error(
      `no notification matching ${outcome} after sending to ${to}; notifications: ${JSON.stringify(seen)}`,
      { cause: e },
    );
  }
}

describe('Handoff view, status bar and Send Handoff in a real VS Code', () => {
  for (const t of THEMES) {
    itNeeds(
      missing,
      `renders receipts, escapes bodies, sends from F1 — ${t.name} theme`,
      { timeout: 180_000 },
      async () => {
        mkdirSync(ARTIFACTS, { recursive: true });
        const agents: Agent[] = [];
        const cspViolations: string[] = [];
        const dialogs: string[] = [];
        const shots: string[] = [];
        const res = await runVsCode({
          extensionPath: ROOT,
          userSettings: {
            'workbench.colorTheme': t.theme,
            'handoff.identity': 'maria',
            'handoff.defaultSlaSeconds': 900,
          },
          env: { HANDOFF_TICK_MS: '200' },
          viewport: { width: 1280, height: 800 },
          timeoutMs: 150_000,
          onPage: async (page, ctx) => {
            page.on('console', (m) => {
              if (/Content Security Policy|Refused to/.test(m.text())) cspViolations.push(m.text());
            });
            page.on('dialog', (d) => {
              dialogs.push(d.message());
              void d.dismiss();
            });
            await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
            await waitUntil(
              async () =>
                t.workbenchClass.test((await page.locator('.monaco-workbench').first().getAttribute('class')) ?? ''),
              10_000,
              `the ${t.theme} theme to be applied`,
            );
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
            const hostile = await builder.ok('send_handoff', { to: 'reviewer', body: XSS, sla_seconds: 600 });
            await reviewer.waitForPushes(2);
            await reviewer.ok('mark_read', { message_id: hostile.message_id });
            // A ghost: mail for someone who connected once and left, with a 1 s SLA that lapses.
            const tester = await connectAgent({ socket, name: 'tester', session: 'tester-1' });
            await tester.close();
            await builder.ok('send_handoff', {
              to: 'tester',
              body: 'Run the integration suite on the release branch',
              sla_seconds: 1,
            });

            const frame = await panelFrame(page);
            const ackRow = frame.locator(`article.event[data-id="${review.message_id}"]`);
            await ackRow
              .locator('.receipt[data-recipient="reviewer"][data-state="acked"]')
              .waitFor({ timeout: 15_000 });
            assert.match(await ackRow.locator('.receipt .label').innerText(), /^ACK · reviewer \d\d:\d\d:\d\d$/);

            // Unchanged rows are kept, not rebuilt, when later updates arrive: no flicker.
            await ackRow.evaluate((n) => {
              (n as HTMLElement).dataset.probe = 'kept';
            });

            const xssRow = frame.locator(`article.event[data-id="${hostile.message_id}"]`);
            await xssRow.locator('.receipt[data-state="read"]').waitFor();
            assert.equal(await xssRow.locator('.preview').innerText(), XSS, 'the body shows as text');
            assert.equal(await frame.locator('img').count(), 0, 'no element was made from the body');

            // Surfaced: a Claude Code hook of coder's brought the handoff into its model's context.
            const coder = await connectAgent({ socket, name: 'coder', session: 'coder-1' });
            agents.push(coder);
            const seen = await builder.ok('send_handoff', {
              to: 'coder',
              body: 'Rebase the parser branch onto main and rerun the fuzzers.',
              sla_seconds: 600,
            });
            const hooked = await runHook(
              ['claude', 'PostToolUse', '--name', 'coder'],
              { session_id: `e2e-${t.name}` },
              { HANDOFF_HUB: socket },
            );
            assert.match(hooked.json?.hookSpecificOutput?.additionalContext ?? '', /Rebase the parser branch/);
            const seenRow = frame.locator(`article.event[data-id="${seen.message_id}"]`);
            await seenRow
              .locator('.receipt[data-recipient="coder"][data-state="surfaced"]')
              .waitFor({ timeout: 15_000 });
            assert.match(await seenRow.locator('.receipt .label').innerText(), /^surfaced · claude \d\d:\d\d:\d\d$/);

            // Woken: a Codex session idle in a tmux pane (a stand-in that reads lines) is typed a wake.
            const paneDir = tempDir('e2e-pane');
            const tmuxSocket = join(paneDir, 'tmux.sock');
            const tmux = (...args: string[]) => execFileSync('tmux', ['-S', tmuxSocket, ...args], { encoding: 'utf8' });
            tmux('new-session', '-d', '-s', 'worker', '-x', '100', '-y', '20', `sh -c 'while read -r l; do :; done'`);
            try {
              const pane = tmux('display-message', '-p', '-t', 'worker', '#{pane_id}').trim();
              agents.push(await connectAgent({ socket, name: 'worker', session: 'worker-1' }));
              const idle = await runHook(
                ['codex', 'Stop', '--name', 'worker'],
                { session_id: `e2e-worker-${t.name}` },
                { HANDOFF_HUB: socket, TMUX: `${tmuxSocket},1,0`, TMUX_PANE: pane },
              );
              assert.equal(idle.code, 0);
              const work = await builder.ok('send_handoff', {
                to: 'worker',
                body: 'Bump the parser to 2.4 and update the lockfile.',
                sla_seconds: 600,
              });
              assert.equal(work.recipients[0].seen_when, 'now');
              const wokenRow = frame.locator(`article.event[data-id="${work.message_id}"]`);
              await waitUntil(
                async () => /^woken · tmux \d\d:\d\d:\d\d$/.test(await wokenRow.locator('.receipt .label').innerText()),
                15_000,
                'the woken row',
              );
            } finally {
              tmux('kill-server');
            }

            const warning = statusBarItem(page, /overdue/);
            await warning.first().waitFor({ timeout: 15_000 });
            assert.match(await warning.first().innerText(), /1 overdue · \d+s/);
            await frame.locator('.coverage-row.is-ghost[data-identity="tester"]').waitFor();

            // One notification when the item first went overdue, not one per tick: none more after these
            // are cleared, by the time a later send (below) is in the panel.
            // (The ghost's silence also escalates to maria past its chase: that arrival is not this notice.)
            const OVERDUE = /has not acknowledged ".*" past its SLA/;
            const escalations = await notifications(page, OVERDUE);
            assert.equal(await escalations.count(), 1, 'notified once');
            assert.match(
              await escalations.first().innerText(),
              /tester has not acknowledged "Run the integration suite on the release branch" past its SLA/,
            );
            await runCommand(page, 'Notifications: Clear All Notifications');

            const result = await sendFromPalette(page, 'reviewer', 'Please re-run the flaky checkout test');
            assert.match(result, /stored and pushed to reviewer \(1 session\)/);
            await reviewer.waitForPushes(3);
            const push = reviewer.pushes[2];
            assert.equal(push.meta.from, 'maria', 'sent as handoff.identity');
            const mine = frame
              .locator('.pending-row', { hasText: 'Please re-run the flaky checkout test' })
              .locator('.countdown');
            await mine.waitFor();
            assert.match(await mine.innerText(), /^ACK due in 1[45]m \d\ds$/, 'the SLA is handoff.defaultSlaSeconds');
            assert.match(push.content, /Please re-run the flaky checkout test/);
            await frame
              .locator('article.event .preview', { hasText: 'Please re-run the flaky checkout test' })
              .waitFor();
            assert.equal(await ackRow.getAttribute('data-probe'), 'kept', 'the unchanged row survived four updates');
            // The notification centre is open (sendFromPalette read its outcome there), the ghost still overdue.
            assert.equal(
              await page.locator('.notifications-center .notification-list-item').filter({ hasText: OVERDUE }).count(),
              0,
              'the overdue item was not notified again by later snapshots',
            );

            // Keep notifications out of the shot: the sidebar and the status bar are the subject.
            await runCommand(page, 'Notifications: Clear All Notifications');
            await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
            // The palette's and the notifications' fade-outs are run to their end for the shots.
            const full = join(ARTIFACTS, `${t.name}-window.png`);
            await page.screenshot({ path: full, animations: 'disabled' });
            const sidebar = join(ARTIFACTS, `${t.name}-panel.png`);
            await page.locator('#workbench\\.parts\\.sidebar').screenshot({ path: sidebar, animations: 'disabled' });
            const status = join(ARTIFACTS, `${t.name}-statusbar.png`);
            await page.locator('#workbench\\.parts\\.statusbar').screenshot({ path: status, animations: 'disabled' });
            await warning.first().hover();
            await page
              .locator('.monaco-hover, .workbench-hover')
              .filter({ hasText: 'past the SLA' })
              .first()
              .waitFor({ timeout: 10_000 });
            const tooltip = join(ARTIFACTS, `${t.name}-statusbar-tooltip.png`);
            await page.screenshot({ path: tooltip, clip: { x: 0, y: 500, width: 700, height: 300 } });
            shots.push(full, sidebar, status, tooltip);

            await warning.first().click();
            await frame.locator('.filter-bar:not([hidden])', { hasText: 'Showing 1 overdue' }).waitFor();
            assert.equal(
              await frame.locator('#events-list article.event').count(),
              1,
              'the panel is filtered to the overdue item',
            );
            await frame.locator('.filter-bar a', { hasText: 'Show all' }).click();
            await frame.locator('.filter-bar').waitFor({ state: 'hidden' });

            if (t.name !== 'dark') return; // the row actions once are enough
            const act = async (row: ReturnType<Frame['locator']>, name: string) => {
              await row.hover();
              await row.locator(`vscode-icon[data-action="${name}"]`).click();
            };
            // Chase: pushed again to the live session, flagged as a chase.
            const before = reviewer.pushes.length;
            await act(xssRow, 'chase');
            await reviewer.waitForPushes(before + 1);
            assert.equal(reviewer.pushes[before].meta.message_id, hostile.message_id);
            assert.equal(reviewer.pushes[before].meta.chase, 'true');
            // Copy id.
            await act(xssRow, 'copyId');
            await statusBarItem(page, `Copied ${hostile.message_id}`).first().waitFor();
            // Open in full: a read-only document with the body as text and every receipt.
            await act(xssRow, 'open');
            const editor = page
              .locator('.monaco-editor .view-lines')
              .filter({ hasText: `Handoff ${hostile.message_id}` });
            await editor.waitFor();
            // Monaco renders spaces as no-break spaces.
            assert.match(
              (await editor.innerText()).replace(/\u00a0/g, ' '),
              new RegExp(
                `<img src=x onerror=alert\\(1\\)>[\\s\\S]*read by reviewer from its MCP session, session ${sessionLabel('reviewer-1')}`,
              ),
            );
            // Resolve the overdue ghost item: the warning goes away.
            const ghostRow = frame.locator('article.event.overdue');
            await act(ghostRow, 'resolve');
            await frame.locator('article.event.resolved').waitFor();
            await warning.first().waitFor({ state: 'detached', timeout: 10_000 });
            await page.screenshot({ path: join(ARTIFACTS, 'dark-actions.png') });
            // The editor selection goes along, with where it came from.
            writeFileSync(
              join(ctx.workspace, 'parser.js'),
              'export function parse(line) {\n  return line.split(",");\n}\n',
            );
            await page.keyboard.press('Control+P');
            await page.locator('.quick-input-widget input').fill('parser.js');
            await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'parser.js' }).first().waitFor();
            await page.keyboard.press('Enter');
            await page.locator('.monaco-editor .view-lines', { hasText: 'export function parse' }).click();
            await page.keyboard.press('Control+A');
            const pushesBefore = reviewer.pushes.length;
            await sendFromPalette(page, 'reviewer', 'Does this handle quoted commas?');
            await reviewer.waitForPushes(pushesBefore + 1);
            assert.match(
              reviewer.pushes[pushesBefore].content,
              /Does this handle quoted commas\?[\s\S]*parser\.js:1-4[\s\S]*return line\.split\(","\);/,
            );

            // A typo is a loud failure that names the nearest identity, never "sent".
            await runCommand(page, 'Notifications: Clear All Notifications');
            const typo = await sendFromPalette(page, 'reviewr', 'Ping', /NOT sent/);
            assert.match(typo, /Handoff NOT sent to reviewr: .*reviewer/);
            assert.doesNotMatch(typo, /stored/);

            // Away and back: the editor rebuilds the view, which asks for the model again.
            await runCommand(page, 'View: Show Explorer');
            const again = await panelFrame(page);
            await again.locator(`article.event[data-id="${review.message_id}"] .receipt[data-state="acked"]`).waitFor();
          },
        });
        await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
        assert.equal(
          res.exitCode,
          0,
          `${res.error?.stack ?? res.error}\n${res.logs
            .split('\n')
            .filter((l) => /harness|pageerror|Handoff|handoff/.test(l))
            .slice(-40)
            .join('\n')}`,
        );
        assert.deepEqual(cspViolations, [], 'no CSP violations');
        assert.deepEqual(dialogs, [], 'no script from a body ran');
        await waitFor(() => shots.every((s) => existsSync(s)), 1000, 'screenshots');
        console.log(`screenshots: ${shots.join(', ')}`);
      },
    );
  }
});

// Playwright end to end, in headless Chromium against a real VS Code (the VS Code server): real
// agents hand off over the real bridge while the person watches the Handoff view, sends from the
// command palette, and sees the status bar warn. Screenshots in a light, a dark and a high-contrast
// theme (the editor's defaults) go to .test-artifacts/e2e/, with the contrast of what the view draws. Skips loudly when the VS Code server is not installed (fails under CI=true).
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
import { sessionLabel } from '../../extension/hub/presence/sessions';
import { contrasts } from './contrast';
import { runFailure, themeApplied, watchForScript } from './workbench';

const missing = vscodeMissing();
announce('the VS Code end-to-end tests', missing);

const ARTIFACTS = join(ROOT, '.test-artifacts', 'e2e');
const XSS = '<img src=x onerror=alert(1)>';
// The editor's own defaults: in Dark 2026 the progress bar and the scrollbar slider are one grey.
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
            watchForScript(page, cspViolations, dialogs);
            await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
            await themeApplied(page, t);
            const socket = await hubSocket(ctx.workspace);

            // Empty: nothing sent, nobody connected — the view offers the first step.
            const empty = await panelFrame(page);
            const welcome = empty.locator('.welcome:not([hidden])');
            await welcome.waitFor({ timeout: 15_000 });
            assert.match(await welcome.innerText(), /No agent is connected/);
            await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
            const emptyShot = join(ARTIFACTS, `${t.name}-empty.png`);
            await page.locator('#workbench\\.parts\\.sidebar').screenshot({ path: emptyShot, animations: 'disabled' });
            shots.push(emptyShot);
            if (t.name === 'dark') {
              // The button runs Connect: which CLI, then that CLI's own Connect command (its name box).
              await welcome.locator('vscode-button[data-action="connect"]').click();
              await page.locator('.quick-input-widget').filter({ hasText: 'Connect an Agent' }).waitFor();
              await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Claude Code' }).first().click();
              await page.locator('.quick-input-widget').filter({ hasText: 'Connect Claude Code' }).waitFor();
              await page.keyboard.press('Escape');
              await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
            }
            // The header in words: the view is "Handoff", the hub's node and pid in the tooltip only.
            assert.equal(
              (await page.locator('#workbench\\.parts\\.sidebar .composite.title h2').first().innerText())
                .trim()
                .toUpperCase(),
              'HANDOFF',
            );
            const hubText = empty.locator('.hub-text');
            await hubText.filter({ hasText: "Running on this repository's hub" }).waitFor();
            assert.match((await hubText.getAttribute('title')) ?? '', /^hub .* · pid \d+/);

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
            await reviewer.ok('report_result', {
              message_id: review.message_id,
              outcome: 'done',
              summary: 'Error paths <b>fixed</b>; merged as #12',
            });
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
            await ackRow.locator('.receipt[data-recipient="reviewer"][data-state="done"]').waitFor({ timeout: 15_000 });
            assert.match(await ackRow.locator('.receipt .label').innerText(), /^done · \d\d:\d\d:\d\d$/);
            // The result's summary on the row, as text.
            assert.equal(
              await ackRow.locator('.receipt .summary').innerText(),
              'Error paths <b>fixed</b>; merged as #12',
            );
            assert.equal(await frame.locator('.summary b').count(), 0, 'no element was made from the summary');

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

            // Contrast, from the computed styles: text 4.5:1, the meter's fill 3:1 against its track.
            const live = frame.locator('.coverage-row .live-count:not(.person)').first();
            await live.waitFor();
            const measured = await contrasts(frame, [
              { what: 'hub line', selector: '.hub-text' },
              { what: 'live count', selector: '.coverage-row .live-count:not(.person)' },
              { what: 'coverage label', selector: '.coverage-row > .dim' },
              { what: 'receipt label', selector: 'article.event .receipt .label' },
              { what: 'result summary', selector: '.receipt .summary' },
              { what: 'countdown', selector: '.pending-row:not(.overdue) .countdown' },
              { what: 'pending preview', selector: '.pending-row .preview' },
              { what: 'event preview', selector: 'article.event:not(.resolved) .preview' },
              { what: 'session client', selector: '.session-row .dim' },
              {
                what: 'meter fill vs track',
                selector: '.meter .fill',
                prop: 'background-color',
                against: { selector: '.meter', prop: 'background-color' },
              },
              { what: 'meter outline', selector: '.meter', prop: 'border-top-color' },
            ]);
            console.log(`contrast, ${t.theme}: ${measured.map((m) => `${m.what} ${m.ratio}`).join(', ')}`);
            writeFileSync(join(ARTIFACTS, `${t.name}-contrast.json`), JSON.stringify(measured, null, 2));
            assert.deepEqual(
              measured
                .filter((m) => m.ratio < (m.what.startsWith('meter') ? 3 : 4.5))
                .map((m) => `${m.what} in ${t.theme}: ${m.ratio}:1 (${m.fg} on ${m.bg})`),
              [],
              'text at 4.5:1 or more, the meter at 3:1 or more',
            );
            // The meter says in words what it draws.
            const meter = frame.locator('.coverage-row[data-identity="reviewer"] .meter');
            assert.equal(await meter.getAttribute('aria-valuetext'), '1/3 acked');
            assert.equal(await meter.getAttribute('aria-label'), 'reviewer: 1/3 acked');
            // Two live regions: the state, and the search box's result count (it changes only when a
            // search answers); the countdowns tick outside both.
            const regions = await frame
              .locator('[aria-live], [role="status"], [role="log"], [role="timer"]')
              .evaluateAll((els) => els.map((e) => e.className));
            assert.deepEqual(
              regions,
              ['search-summary', 'announcer'],
              'the state and the search count, no other live region',
            );
            assert.equal(
              await frame
                .locator('.countdown')
                .evaluateAll(
                  (els) =>
                    els.filter((e) => e.closest('[aria-live], [role="status"], [role="log"], [role="timer"]')).length,
                ),
              0,
              'no countdown inside a live region',
            );
            const said = await frame.locator('.announcer').innerText();
            const ticking = await mine.innerText();
            await waitUntil(async () => (await mine.innerText()) !== ticking, 5_000, 'the countdown to tick');
            assert.equal(await frame.locator('.announcer').innerText(), said, 'the live region did not change with it');
            assert.match(said, /handoffs, \d+ waiting for an ACK, \d+ ACKed, waiting for a result, 1 overdue/);

            // Keep notifications out of the shot: the sidebar and the status bar are the subject.
            await runCommand(page, 'Notifications: Clear All Notifications');
            await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
            // The palette's and the notifications' fade-outs are run to their end for the shots.
            const full = join(ARTIFACTS, `${t.name}-window.png`);
            await page.screenshot({ path: full, animations: 'disabled' });
            const sidebar = join(ARTIFACTS, `${t.name}-panel.png`);
            await page.locator('#workbench\\.parts\\.sidebar').screenshot({ path: sidebar, animations: 'disabled' });
            // The lower half: pending countdowns, sessions and the coverage meters.
            await frame.locator('#coverage-list .coverage-row').last().scrollIntoViewIfNeeded();
            const lower = join(ARTIFACTS, `${t.name}-panel-lower.png`);
            await page.locator('#workbench\\.parts\\.sidebar').screenshot({ path: lower, animations: 'disabled' });
            shots.push(lower);
            await frame.locator('.hub-line').scrollIntoViewIfNeeded();
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
            // Open in full: a read-only document with the body as text and every receipt, titled by
            // its sender and subject, no file on disk.
            await act(xssRow, 'open');
            const tab = page.locator('.tabs-container .tab.active');
            await tab.filter({ hasText: 'builder: <img src=x onerror=alert(1)>' }).waitFor();
            const tabText = await tab.innerText();
            assert.doesNotMatch(tabText, /\.txt|[0-9A-Z]{26}/, `a title a person reads: ${tabText}`);
            assert.match(
              (await tab.getAttribute('title')) ?? (await tab.getAttribute('aria-label')) ?? '',
              /^handoff:|builder/,
            );
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

            // No "Show Panel" beside VS Code's own "Focus on Handoff View".
            await page.keyboard.press('F1');
            await page.locator('.quick-input-widget input').fill('>Handoff: Show');
            await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Handoff: Show Log' }).waitFor();
            assert.deepEqual(
              (await page.locator('.quick-input-widget .monaco-list-row').allInnerTexts()).filter((r) =>
                /Show Panel/.test(r),
              ),
              [],
            );
            await page.keyboard.press('Escape');

            // Away and back: the editor rebuilds the view, which asks for the model again.
            await runCommand(page, 'View: Show Explorer');
            const again = await panelFrame(page);
            await again.locator(`article.event[data-id="${review.message_id}"] .receipt[data-state="done"]`).waitFor();
          },
        });
        await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
        assert.equal(res.exitCode, 0, runFailure(res));
        assert.deepEqual(cspViolations, [], 'no CSP violations');
        assert.deepEqual(dialogs, [], 'no script from a body ran');
        await waitFor(() => shots.every((s) => existsSync(s)), 1000, 'screenshots');
        console.log(`screenshots: ${shots.join(', ')}`);
      },
    );
  }
});

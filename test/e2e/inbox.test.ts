// The person at the editor is on the bus, end to end in a real VS Code (the VS Code server, driven
// by Playwright in headless Chromium): a real agent (MCP SDK client over the real bridge) sends a
// hostile body to handoff.identity; one notification appears, as text; the Handoff view lists it
// unread; opening it writes the person's read receipt (seen by a second window of the same hub);
// ACK and Done from the panel reach the agent's get_receipts with the editor's session and time;
// Reply reaches the agent as a handoff with reply_to, pushed once. Screenshots in light, dark and
// high-contrast go to .test-artifacts/e2e/. Skips loudly without the VS Code server (fails under CI=true).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { call, PresenceRequest, SnapshotRequest } from '../../extension/protocol/control';
import { connectControl } from '../../extension/shared/controlClient';
import { connectAgent, plainBody, type Agent } from '../helpers/agent';
import { ROOT } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runCommand, runVsCode, statusBarItem, webviewFrame } from '../vscode/harness.mjs';
import { hubSocket } from '../vscode/processes';
import { waitUntil } from '../helpers/wait';
import { pickTheme, runFailure, watchForScript } from './workbench';

const missing = vscodeMissing();
announce('the inbox end-to-end test', missing);

const ARTIFACTS = join(ROOT, '.test-artifacts', 'e2e');
/** HTML, a command link and markdown: each must stay text in the inbox and in the notification. */
const HOSTILE =
  'Approve the migration <img src=x onerror=alert(1)> [run this](command:workbench.action.terminal.new) **now** _please_';
const THEMES = [
  // `label` is how the theme picker lists it.
  { name: 'dark', theme: 'Default Dark Modern', label: 'Dark Modern', workbenchClass: /\bvs-dark\b/ },
  { name: 'light', theme: 'Default Light Modern', label: 'Light Modern', workbenchClass: /\bvs\b(?!-)/ },
  {
    name: 'high-contrast',
    theme: 'Default High Contrast',
    label: 'Dark High Contrast',
    workbenchClass: /\bhc-black\b/,
  },
];

/** Answers the input box the editor shows (reply body, result summary). */
async function answerInputBox(page: Page, title: string, text: string): Promise<void> {
  const box = page.locator('.quick-input-widget').filter({ hasText: title });
  await box.waitFor({ timeout: 15_000 });
  await box.locator('input').fill(text);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

describe('The person at the editor, in a real VS Code', () => {
  itNeeds(
    missing,
    'an agent hands off to the person: notified once, inbox, read receipt, ACK, Reply, Done — three themes',
    { timeout: 240_000 },
    async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const agents: Agent[] = [];
      const cspViolations: string[] = [];
      const dialogs: string[] = [];
      const shots: string[] = [];
      const res = await runVsCode({
        extensionPath: ROOT,
        userSettings: {
          'workbench.colorTheme': THEMES[0].theme,
          'handoff.identity': 'maria',
          'handoff.defaultSlaSeconds': 900,
        },
        viewport: { width: 1280, height: 800 },
        timeoutMs: 210_000,
        onPage: async (page, ctx) => {
          watchForScript(page, cspViolations, dialogs);
          await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
          const socket = await hubSocket(ctx.workspace);
          const builder = await connectAgent({ socket, name: 'builder', session: 'builder-1' });
          agents.push(builder);

          // Presence: the window said who sits at it; agents see the person in list_peers.
          const peers: any[] = await waitUntil(
            async () => {
              const listed: any[] = (await builder.ok('list_peers')).peers;
              return listed.some((p) => p.identity === 'maria' && p.person) && listed;
            },
            30_000,
            'maria in list_peers',
          );
          const maria = peers.find((p) => p.identity === 'maria');
          assert.equal(maria.person.at_editor, true);
          assert.equal(maria.person.windows, 1);
          assert.equal(maria.person.live, true, `the focused window makes maria live: ${JSON.stringify(maria)}`);
          assert.equal(maria.live, true);

          // A second window of the same hub, through the same control protocol a second editor window uses.
          const other = await connectControl(socket, 'second-window');
          await other.connection.sendRequest(PresenceRequest.method, { identity: 'maria', focused: false });
          const otherSnapshot = () => call(other.connection, SnapshotRequest);
          const otherInbox = async () =>
            (await otherSnapshot()).people.find((p) => p.identity === 'maria')?.inbox ?? [];

          try {
            const sent = await builder.ok('send_handoff', { to: 'maria', body: HOSTILE, sla_seconds: 600 });
            const id: string = sent.message_id;

            // One notification, with the body as text and no live command link.
            await runCommand(page, 'Notifications: Show Notifications');
            const toasts = page
              .locator('.notifications-center .notification-list-item')
              .filter({ hasText: 'Handoff from builder' });
            await toasts.first().waitFor({ timeout: 30_000 });
            const toastText = (await toasts.first().locator('.notification-list-item-message').innerText()).replace(
              /\u200b/g,
              '',
            );
            assert.equal(toastText, `Handoff from builder: "${HOSTILE}"`, 'the body shows as text, markdown and all');
            assert.equal(
              await toasts.first().locator('a[href^="command:"], a[data-href^="command:"]').count(),
              0,
              'no command link was made from the body',
            );
            assert.equal(await page.locator('.notifications-center img[src="x"]').count(), 0);
            assert.deepEqual(await toasts.first().locator('.monaco-button').allInnerTexts(), ['Open', 'ACK']);

            // The inbox: unread, the body as text, the unread count on the status bar and the view badge.
            await runCommand(page, 'Handoff: Focus on Handoff View');
            const frame: Frame = await webviewFrame(
              page,
              (f) =>
                f
                  .locator('#inbox-list')
                  .count()
                  .then((n) => n > 0),
              30_000,
            );
            const row = frame.locator(`article.inbox-row[data-id="${id}"]`);
            await row.waitFor({ timeout: 15_000 });
            assert.match((await row.getAttribute('class')) ?? '', /\bunread\b/);
            assert.equal(await row.locator('.preview').innerText(), HOSTILE, 'the inbox shows the body as text');
            assert.equal(
              await frame.locator('img, a[href^="command:"], strong, em').count(),
              0,
              'no element was made from the body',
            );
            const status = statusBarItem(page, /Handoff/);
            await waitUntil(
              async () => /\b1$/.test(await status.first().innerText()),
              10_000,
              'the unread count on the status bar',
            );
            const badge = page
              .locator('.activitybar .action-item', { has: page.locator('[aria-label^="Handoff"]') })
              .locator('.badge-content');
            await badge.first().waitFor({ timeout: 10_000 });
            assert.equal((await badge.first().innerText()).trim(), '1', 'the view badge shows the unread count');
            assert.equal((await otherInbox()).find((i) => i.id === id)?.unread, true, 'unread in the other window too');
            // A later snapshot, still with maria's handoff unread, must not notify again: a handoff to
            // someone else reaching this window's ledger shows this window has taken one in.
            const tester = await connectAgent({ socket, name: 'tester', session: 'tester-1' });
            agents.push(tester);
            const later = await builder.ok('send_handoff', {
              to: 'tester',
              body: 'a later snapshot',
              sla_seconds: 600,
            });
            await frame.locator(`article.event[data-id="${later.message_id}"]`).waitFor({ timeout: 15_000 });

            // Screenshots while it is unread, in each theme.
            await runCommand(page, 'Notifications: Show Notifications');
            for (const t of THEMES) {
              if (t !== THEMES[0]) await pickTheme(page, t);
              await runCommand(page, 'Notifications: Show Notifications');
              await page.locator('.notifications-center .notification-list-item').first().waitFor();
              if (t === THEMES[0]) assert.equal(await toasts.count(), 1, 'notified once');
              await row.hover();
              await row.locator('vscode-icon[data-act="ack"]').waitFor({ state: 'visible' });
              // Transitions (the hover, the notification centre) are run to their end for the shot.
              const full = join(ARTIFACTS, `inbox-${t.name}-window.png`);
              await page.screenshot({ path: full, animations: 'disabled' });
              const sidebar = join(ARTIFACTS, `inbox-${t.name}-panel.png`);
              await page.locator('#workbench\\.parts\\.sidebar').screenshot({ path: sidebar, animations: 'disabled' });
              shots.push(full, sidebar);
            }
            await runCommand(page, 'Notifications: Clear All Notifications');

            // Open from the keyboard: focus the row, Enter. The message opens as text; maria's read receipt is written.
            await row.focus();
            await page.keyboard.press('Enter');
            const editor = page.locator('.monaco-editor .view-lines').filter({ hasText: `Handoff ${id}` });
            await editor.waitFor({ timeout: 15_000 });
            assert.match(
              (await editor.innerText()).replace(/\u00a0/g, ' '),
              /read by maria from the editor window, session s-[0-9a-f]{12},/,
              'the opened handoff shows the read receipt it wrote',
            );
            const receipts = async () => (await builder.ok('get_receipts', { message_id: id })).deliveries[0];
            const stateIs = (state: string) => async () => {
              const r = await receipts();
              return r.state === state && r;
            };
            let d = await waitUntil(stateIs('read'), 10_000, 'the read receipt');
            const read = d.receipts.find((r: any) => r.kind === 'read');
            assert.equal(read.by, 'maria');
            // get_receipts and the hub's snapshot both name the editor's control session by its label.
            const readLabel =
              (await otherSnapshot()).messages.find((e) => e.id === id)?.recipients[0].lastReceipt?.session ?? '';
            assert.match(readLabel, /^s-[0-9a-f]{12}$/, 'a label, not a key');
            assert.equal(read.session, readLabel);
            await row.and(frame.locator(':not(.unread)')).waitFor({ timeout: 10_000 });
            await waitUntil(
              async () => (await otherInbox()).find((i) => i.id === id)?.unread === false,
              10_000,
              'the other window to see it read',
            );
            await badge.first().waitFor({ state: 'hidden', timeout: 10_000 });

            // ACK from the panel.
            const t0 = Date.now();
            await row.hover();
            await row.locator('vscode-icon[data-act="ack"]').click();
            d = await waitUntil(stateIs('acked'), 10_000, 'the ACK');
            const ack = d.receipts.find((r: any) => r.kind === 'ack');
            assert.equal(ack.by, 'maria');
            assert.equal(ack.session, read.session, 'the same editor session');
            assert.ok(Date.parse(ack.at) >= t0 - 1000 && Date.parse(ack.at) <= Date.now(), `ACK time ${ack.at}`);
            await row.locator('.inbox-state', { hasText: 'ACKed' }).waitFor();

            // Reply: a handoff back to builder with reply_to and the same thread, pushed once.
            const before = builder.pushes.length;
            await row.hover();
            await row.locator('vscode-icon[data-act="reply"]').click();
            await answerInputBox(page, 'Reply to builder', 'Approved: run it after 18:00');
            await builder.waitForPushes(before + 1);
            const push = builder.pushes[before];
            assert.equal(push.meta.from, 'maria');
            assert.equal(push.meta.thread, sent.thread);
            const replyId = push.meta.message_id;
            const got = await builder.ok('get_message', { message_id: replyId });
            assert.equal(got.reply_to, id, 'reply_to names the handoff');
            assert.equal(got.thread, sent.thread, 'in the same thread');
            assert.equal(plainBody(got), 'Approved: run it after 18:00');
            // Pushes to builder come in order: a handoff sent after the reply, once pushed, shows any
            // second push of the reply would have come first.
            await tester.ok('send_handoff', { to: 'builder', body: 'after the reply', sla_seconds: 600 });
            await builder.waitForPushes(before + 2);
            assert.equal(
              builder.pushes.filter((p) => p.meta.message_id === replyId).length,
              1,
              'the reply was pushed once',
            );

            // Done, with a summary: the row leaves the inbox.
            const t1 = Date.now();
            await row.hover();
            await row.locator('vscode-icon[data-act="done"]').click();
            await answerInputBox(page, 'Handoff: report done', 'Migration approved for tonight');
            d = await waitUntil(stateIs('done'), 10_000, 'the result');
            const done = d.receipts.find((r: any) => r.kind === 'result');
            assert.deepEqual(
              [done.by, done.outcome, plainBody({ body: done.summary }), done.session],
              ['maria', 'done', 'Migration approved for tonight', read.session],
            );
            assert.ok(Date.parse(done.at) >= t1 - 1000, `result time ${done.at}`);
            await row.waitFor({ state: 'detached', timeout: 10_000 });
            await page.screenshot({ path: join(ARTIFACTS, 'inbox-after-done.png') });
            // The person's receipt names the channel that wrote it on the event's row, light and dark.
            const doneRow = frame.locator(`article.event[data-id="${id}"]`);
            for (const t of [THEMES[1], THEMES[0]]) {
              await pickTheme(page, t);
              let text = '';
              await waitUntil(
                async () => /done via editor · /.test((text = await doneRow.innerText())),
                10_000,
                () => `the row to say 'via editor': ${text}`,
              );
              const shot = join(ARTIFACTS, `inbox-${t.name}-after-done.png`);
              await page.locator('#workbench\\.parts\\.sidebar').screenshot({ path: shot, animations: 'disabled' });
              shots.push(shot);
            }

            // maria moves to the other window: a new handoff reaches this window's inbox, but only the other notifies.
            await runCommand(page, 'Notifications: Clear All Notifications');
            const { window: otherWindow } = (await other.connection.sendRequest(PresenceRequest.method, {
              identity: 'maria',
              focused: true,
            })) as { window: string };
            const quiet = await builder.ok('send_handoff', {
              to: 'maria',
              body: 'while maria is in the other window',
              sla_seconds: 600,
            });
            await frame.locator(`article.inbox-row[data-id="${quiet.message_id}"]`).waitFor({ timeout: 15_000 });
            assert.equal(
              (await otherSnapshot()).people.find((p) => p.identity === 'maria')?.notifier,
              otherWindow,
              'the other window notifies',
            );
            // maria comes back to this window, which notifies again: its notice of a later handoff,
            // once shown, shows a notice of the quiet one would have come first.
            await other.connection.sendRequest(PresenceRequest.method, { identity: 'maria', focused: false });
            await waitUntil(
              async () => (await otherSnapshot()).people.find((p) => p.identity === 'maria')?.notifier !== otherWindow,
              10_000,
              'this window to notify again',
            );
            await builder.ok('send_handoff', { to: 'maria', body: 'back in this window', sla_seconds: 600 });
            await runCommand(page, 'Notifications: Show Notifications');
            await page
              .locator('.notifications-center .notification-list-item')
              .filter({ hasText: 'back in this window' })
              .first()
              .waitFor({ timeout: 15_000 });
            assert.equal(
              await page
                .locator('.notifications-center .notification-list-item')
                .filter({ hasText: 'while maria is in the other window' })
                .count(),
              0,
              'this window does not notify too',
            );
          } finally {
            other.close();
          }
        },
      });
      await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
      assert.equal(res.exitCode, 0, runFailure(res));
      assert.deepEqual(cspViolations, [], 'no CSP violations');
      assert.deepEqual(dialogs, [], 'no script from a body ran');
      console.log(`screenshots: ${shots.join(', ')}`);
    },
  );
});

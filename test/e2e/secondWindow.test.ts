// A second window on the folder (a second browser tab of the same VS Code server), in a real VS Code:
// it uses the first window's hub without a single error notification or error-level log line, says
// in one line where the hub runs, and its ACK either works (the hub takes it as an editor window)
// or is not offered. Skips loudly without the VS Code server (fails under CI=true).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import type { Page } from 'playwright-core';
import { connectAgent, type Agent } from '../helpers/agent';
import { ROOT } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { waitUntil } from '../helpers/wait';
import { runCommand, runVsCode, statusBarItem } from '../vscode/harness.mjs';
import { hubSocket } from '../vscode/processes';

const missing = vscodeMissing();
announce('the second-window end-to-end test', missing);

/** Every Handoff output channel the server's windows wrote (one per extension host). */
function handoffLogs(tempDir: string): string[] {
  return (readdirSync(tempDir, { recursive: true }) as string[])
    .filter((f) => /Handoff\.log$/.test(f))
    .map((f) => readFileSync(join(tempDir, f), 'utf8'));
}

/** The notification centre's items, as text, with whether each is an error. */
async function notifications(page: Page): Promise<{ text: string; error: boolean }[]> {
  await runCommand(page, 'Notifications: Show Notifications');
  await page.locator('.notifications-center').waitFor();
  const items = page.locator('.notifications-center .notification-list-item');
  const out: { text: string; error: boolean }[] = [];
  for (let i = 0; i < (await items.count()); i++) {
    const item = items.nth(i);
    out.push({
      text: await item.innerText(),
      error: (await item.locator('.codicon-error').count()) > 0,
    });
  }
  await page.keyboard.press('Escape');
  return out;
}

describe('A second window on the same folder, in a real VS Code', () => {
  itNeeds(
    missing,
    'shares the hub calmly: no error notification, nothing logged as an error, ACK works or is not offered',
    { timeout: 240_000 },
    async () => {
      const agents: Agent[] = [];
      let logs: string[] = [];
      const res = await runVsCode({
        extensionPath: ROOT,
        userSettings: { 'handoff.identity': 'maria' },
        keepTemp: true,
        timeoutMs: 200_000,
        onPage: async (first, ctx) => {
          await statusBarItem(first, 'Handoff').first().waitFor({ timeout: 30_000 });
          const socket = await hubSocket(ctx.workspace);
          const builder = await connectAgent({ socket, name: 'builder', session: 'builder-1' });
          agents.push(builder);
          const second = await first.context().newPage();
          await second.goto(ctx.url);
          await statusBarItem(second, 'Handoff').first().waitFor({ timeout: 60_000 });
          const shared = () => handoffLogs(ctx.tempDir).some((l) => l.includes('runs in another window'));
          await waitUntil(() => shared(), 30_000, 'the second window to use the first one’s hub');

          const sent = await builder.ok('send_handoff', { to: 'maria', body: 'second window ACK', sla_seconds: 600 });
          const id: string = sent.message_id;
          // ACK from the second window's inbox, from the keyboard, where it is offered.
          await runCommand(second, 'Handoff: Open Inbox…');
          const rows = second.locator('.quick-input-widget .monaco-list-row');
          await rows.filter({ hasText: 'second window ACK' }).first().waitFor({ timeout: 15_000 });
          await second.keyboard.press('Enter');
          await rows.filter({ hasText: 'Open' }).first().waitFor({ timeout: 15_000 });
          const offered = (await rows.allInnerTexts()).map((t) => t.trim());
          if (offered.some((t) => t.endsWith('ACK'))) {
            await second.locator('.quick-input-widget input').fill('ACK');
            await second.keyboard.press('Enter');
            await waitUntil(
              async () => (await builder.ok('get_receipts', { message_id: id })).deliveries[0].state === 'acked',
              15_000,
              'the ACK from the second window reaches the sender',
            );
          } else {
            assert.deepEqual(offered, ['Open', 'Reply…'], 'only what this window can do is offered');
            await second.keyboard.press('Escape');
          }

          const said = await notifications(second);
          assert.deepEqual(
            said.filter(
              (n) => n.error || /-32097|initialization failed|Pending response|couldn't create/i.test(n.text),
            ),
            [],
            `no error notification in the second window: ${JSON.stringify(said)}`,
          );
          logs = handoffLogs(ctx.tempDir);
        },
      }).finally(() => Promise.all(agents.map((a) => a.close().catch(() => undefined))));
      assert.equal(res.error, undefined, `${res.error?.stack}\n${res.logs.slice(-3000)}`);
      assert.equal(logs.length, 2, 'one Handoff log per window');
      const errors = logs.flatMap((l) => l.split('\n').filter((line) => /\[error\]/.test(line)));
      assert.deepEqual(errors, [], 'nothing at error level in either window’s log');
      const calm = logs
        .join('\n')
        .split('\n')
        .filter((l) => l.includes('runs in another window'));
      assert.equal(calm.length, 1, `one line says where the hub runs:\n${calm.join('\n')}`);
      assert.match(calm[0], /\[info\]/);
    },
  );
});

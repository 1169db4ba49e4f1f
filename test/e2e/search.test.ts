// The Handoff view's search box and its finished handoffs, in a real VS Code (the VS Code server,
// driven by Playwright in headless Chromium): the Events list shows as many finished handoffs after
// Handoff: Restart Hub as before it (the restart moved them into history), and a search finds a
// finished one there, marked settled, and opens it like a row. Filters, a bad filter said in the
// view, Escape back to the lists, an agent's markup shown as text. Screenshots of the search in a
// light and a dark theme go to .test-artifacts/e2e/ (and with HANDOFF_DOCS_SCREENSHOTS=1 to
// docs/images/, which docs/editor.md links).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { connectAgent, type Agent } from '../helpers/agent';
import { ROOT } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { waitUntil } from '../helpers/wait';
import { runCommand, runVsCode, statusBarItem, webviewFrame } from '../vscode/harness.mjs';
import { hubProcesses, hubSocket } from '../vscode/processes';
import { handoffLog } from './handoffLog';
import { runFailure, themeApplied, watchForScript } from './workbench';

const missing = vscodeMissing();
announce('the view search end-to-end test', missing);

const ARTIFACTS = join(ROOT, '.test-artifacts', 'e2e');
const DOCS = process.env.HANDOFF_DOCS_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'images') : undefined;
const XSS = '<img src=x onerror=alert(1)> in the lexer notes';
const THEMES = [
  { name: 'light', theme: 'Default Light Modern', workbenchClass: /\bvs\b/ },
  { name: 'dark', theme: 'Default Dark Modern', workbenchClass: /\bvs-dark\b/ },
];

async function panelFrame(page: Page): Promise<Frame> {
  await runCommand(page, 'Handoff: Focus on Handoff View');
  return webviewFrame(page, async (f) => (await f.locator('#events-list').count()) > 0, 30_000);
}

/** The Events rows, and those whose every recipient is done. */
async function eventRows(frame: Frame): Promise<{ all: string[]; finished: string[] }> {
  return frame.locator('#events-list article.event').evaluateAll((rows) => ({
    all: rows.map((r) => (r as HTMLElement).dataset.id!).sort(),
    finished: rows
      .filter((r) => Array.from(r.querySelectorAll<HTMLElement>('.receipt')).every((x) => x.dataset.state === 'done'))
      .map((r) => (r as HTMLElement).dataset.id!)
      .sort(),
  }));
}

describe('Search and finished handoffs in the Handoff view, in a real VS Code', () => {
  for (const t of THEMES) {
    itNeeds(
      missing,
      `finished handoffs stay listed across Restart Hub; search finds one in history and opens it — ${t.name} theme`,
      { timeout: 200_000 },
      async () => {
        mkdirSync(ARTIFACTS, { recursive: true });
        if (DOCS) mkdirSync(DOCS, { recursive: true });
        const agents: Agent[] = [];
        const cspViolations: string[] = [];
        const dialogs: string[] = [];
        const figures: string[] = [];
        const res = await runVsCode({
          extensionPath: ROOT,
          userSettings: { 'workbench.colorTheme': t.theme, 'handoff.identity': 'maria' },
          viewport: { width: 1280, height: 800 },
          timeoutMs: 180_000,
          onPage: async (page, ctx) => {
            watchForScript(page, cspViolations, dialogs);
            await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
            await themeApplied(page, t);
            const socket = await hubSocket(ctx.workspace);
            const firstHub = hubProcesses(ctx.workspace)[0].pid;
            const builder = await connectAgent({ socket, name: 'builder', session: 'builder-1' });
            const reviewer = await connectAgent({ socket, name: 'reviewer', session: 'reviewer-1' });
            agents.push(builder, reviewer);
            const finish = async (body: string) => {
              const id = (await builder.ok('send_handoff', { to: 'reviewer', body })).message_id as string;
              await reviewer.ok('report_result', { message_id: id, outcome: 'done', summary: 'shipped' });
              return id;
            };
            const parser = await finish('Review the parser: it streams tokens now; check the error paths.');
            const lexer = await finish('Bump the lexer to 2.4 and update the lockfile.');
            const hostile = await finish(XSS);
            const open = (await builder.ok('send_handoff', { to: 'reviewer', body: 'Write the parser release notes.' }))
              .message_id as string;

            const frame = await panelFrame(page);
            await waitUntil(async () => (await eventRows(frame)).all.length === 4, 15_000, 'four rows in Events');
            const before = await eventRows(frame);
            assert.equal(before.finished.length, 3, 'three finished before the restart');
            assert.ok(!before.finished.includes(open));

            await runCommand(page, 'Handoff: Restart Hub');
            const second = await waitUntil(
              () => hubProcesses(ctx.workspace).find((h) => h.pid !== firstHub && existsSync(h.socket)),
              60_000,
              'a new hub',
            );
            // The new hub took them from history: its store opened with the finished ones archived.
            await waitUntil(
              () => /store .*: 1 open.*, 3 archived/.test(handoffLog(ctx.tempDir)),
              30_000,
              'the new hub to open its store with 3 archived',
            );
            // The view drops the last hub's rows when it hears of the new one, then lists the new one's.
            // The hub line's tooltip names the process behind it.
            await frame.locator(`.hub-line .hub-text[title*="pid ${second.pid} "]`).waitFor({ timeout: 30_000 });
            await waitUntil(async () => (await eventRows(frame)).all.length > 0, 30_000, "the new hub's rows");
            const after = await eventRows(frame);
            assert.deepEqual(after, before, 'the same handoffs listed, finished and open, after the restart');
            figures.push(
              `Events before / after Restart Hub: ${before.all.length} / ${after.all.length} rows, ${before.finished.length} / ${after.finished.length} finished`,
            );

            // The lists after the restart, the empty box above them.
            const sidebar = page.locator('#workbench\\.parts\\.sidebar');
            await sidebar.screenshot({ path: join(ARTIFACTS, `search-box-${t.name}.png`), animations: 'disabled' });

            // Search: the finished review, read back from history, marked settled.
            const box = frame.locator('.search-input');
            await box.fill('parser');
            const hit = frame.locator(`article.search-hit[data-id="${parser}"]`);
            await hit.waitFor({ timeout: 15_000 });
            assert.equal(await hit.locator('.hit-state .label').innerText(), 'settled · reviewer done');
            assert.match(await hit.locator('.preview').innerText(), /^Review the parser: it streams tokens/);
            assert.equal(
              await frame.locator(`article.search-hit[data-id="${open}"] .hit-state .label`).innerText(),
              'reviewer pushed',
              'the open one too, not settled',
            );
            assert.equal(await frame.locator('.search-summary').innerText(), '2 handoffs, newest first.');
            assert.equal(await frame.locator('#events').isVisible(), false, 'the results stand in for the lists');

            // Filters, and a bad one said in the view.
            await box.fill('from:builder state:settled');
            await waitUntil(
              async () => (await frame.locator('article.search-hit').count()) === 3,
              15_000,
              'three settled from builder',
            );
            await box.fill('state:late');
            await frame.locator('.search-summary.search-error', { hasText: 'state:late is not a state' }).waitFor();
            assert.equal(await frame.locator('article.search-hit').count(), 0);

            // An agent's markup is text in a hit too.
            await box.fill('onerror');
            const xss = frame.locator(`article.search-hit[data-id="${hostile}"]`);
            await xss.waitFor({ timeout: 15_000 });
            assert.equal(await xss.locator('.preview').innerText(), XSS);
            assert.equal(await frame.locator('img').count(), 0, 'no element was made from a body');

            // The picture: everything builder sent, newest first.
            await box.fill('from:builder');
            await waitUntil(
              async () => (await frame.locator('article.search-hit').count()) === 4,
              15_000,
              'four from builder',
            );
            await frame.locator(`article.search-hit[data-id="${parser}"]`).hover();
            for (const dir of [ARTIFACTS, ...(DOCS ? [DOCS] : [])])
              await sidebar.screenshot({ path: join(dir, `search-${t.name}.png`), animations: 'disabled' });

            // Open, as on a row: the read-only document of a handoff that is in history only.
            await hit.hover();
            await box.fill('parser');
            await hit.waitFor();
            await hit.hover();
            await hit.locator('vscode-icon[data-action="open"]').click();
            const editor = page.locator('.monaco-editor .view-lines').filter({ hasText: `Handoff ${parser}` });
            await editor.waitFor({ timeout: 15_000 });
            assert.match((await editor.innerText()).replace(/\u00a0/g, ' '), /Review the parser: it streams tokens/);

            // Escape clears the box and brings the lists back.
            await box.focus();
            await page.keyboard.press('Escape');
            await frame.locator('#events').waitFor({ state: 'visible' });
            assert.equal(await box.inputValue(), '');
            assert.equal(await frame.locator('.search-results').isVisible(), false);

            // By keyboard: Down from the box to the first hit, Enter opens it.
            await box.fill('lockfile');
            await frame.locator(`article.search-hit[data-id="${lexer}"]`).waitFor({ timeout: 15_000 });
            await box.focus();
            await page.keyboard.press('ArrowDown');
            await page.keyboard.press('Enter');
            await page
              .locator('.monaco-editor .view-lines')
              .filter({ hasText: `Handoff ${lexer}` })
              .waitFor({ timeout: 15_000 });
          },
        });
        await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
        for (const f of figures) console.log(`# ${f}`);
        assert.equal(res.error, undefined, runFailure(res));
        assert.deepEqual(cspViolations, [], 'no CSP violations');
        assert.deepEqual(dialogs, [], 'no script from a body ran');
      },
    );
  }
});

// Two repositories on one machine in a real VS Code (the VS Code server, Playwright in headless
// Chromium): the window's repository (backend) linked both ways to a second real hub (frontend).
// The view's Linked Repositories shows frontend's short name, whether its hub answers, its agents
// with their liveness and what is queued for it; a handoff from bob@frontend to the person at this
// window lands in this window's inbox with its origin, as text; unlinking from the view asks first.
// Screenshots in a dark and a light theme go to .test-artifacts/e2e/. Skips loudly without the VS
// Code server (fails under CI=true).
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import type { Frame, Page } from 'playwright-core';
import { connectAgent, type Agent } from '../helpers/agent';
import { ROOT, tempDir, type HubProcess } from '../helpers/hubProcess';
import { handoff, linkState, linksOf, repoHub } from '../helpers/linkedHubs';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runCommand, runVsCode, statusBarItem, webviewFrame } from '../vscode/harness.mjs';
import { hubSocket } from '../vscode/processes';
import { waitUntil } from '../helpers/wait';
import { pickTheme, runFailure, watchForScript } from './workbench';

const missing = vscodeMissing();
announce('the linked repositories end-to-end test', missing);

const ARTIFACTS = join(ROOT, '.test-artifacts', 'e2e');
const HOSTILE = 'Check the <img src=x onerror=alert(1)> login form [run](command:workbench.action.terminal.new)';
const DARK = { theme: 'Default Dark Modern', label: 'Dark Modern', workbenchClass: /\bvs-dark\b/ };
const LIGHT = { theme: 'Default Light Modern', label: 'Light Modern', workbenchClass: /\bvs\b(?!-)/ };

async function panelFrame(page: Page): Promise<Frame> {
  await runCommand(page, 'Handoff: Focus on Handoff View');
  return webviewFrame(
    page,
    (f) =>
      f
        .locator('#links-list')
        .count()
        .then((n) => n > 0),
    30_000,
  );
}

describe('Linked repositories in a real VS Code', () => {
  itNeeds(
    missing,
    'the view draws the link (reachable, agents, queued), the inbox takes a linked handoff, unlink asks first',
    { timeout: 240_000 },
    async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const base = realpathSync(tempDir('e2e-link'));
      const workspace = join(base, 'backend');
      mkdirSync(workspace, { recursive: true });
      let frontend: HubProcess = await repoHub('frontend');
      const agents: Agent[] = [];
      const cspViolations: string[] = [];
      const dialogs: string[] = [];
      const shots: string[] = [];
      try {
        const res = await runVsCode({
          extensionPath: ROOT,
          workspace,
          userSettings: { 'workbench.colorTheme': DARK.theme, 'handoff.identity': 'maria' },
          viewport: { width: 1280, height: 800 },
          timeoutMs: 210_000,
          onPage: async (page) => {
            watchForScript(page, cspViolations, dialogs);
            await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
            const backend = { socket: await hubSocket(workspace) };
            const sidebar = page.locator('#workbench\\.parts\\.sidebar');
            const shot = async (name: string) => {
              const path = join(ARTIFACTS, `links-${name}.png`);
              await page.mouse.move(1200, 700); // no hover on a row in the picture
              await sidebar.screenshot({ path, animations: 'disabled' });
              shots.push(path);
            };

            // Linked on both sides, as a person does it (the CLI here; the view shows the result).
            assert.match(await handoff(backend, 'link', frontend.workspace), /this repository is backend/);
            const frame = await panelFrame(page);
            const link = frame.locator(`.link-row[data-root="${frontend.workspace}"]`);
            // Linked here only: its hub answers, but nothing flows until it links back.
            await link.and(frame.locator('[data-state="waiting"]')).waitFor({ timeout: 30_000 });
            await handoff(frontend, 'link', workspace);
            await linkState(frontend, workspace, 'linked');

            // Its agents: bob live, carol gone; alice here.
            const bob = await connectAgent({ socket: frontend.socket, name: 'bob', session: 'bob-1' });
            const carol = await connectAgent({ socket: frontend.socket, name: 'carol', session: 'carol-1' });
            const alice = await connectAgent({ socket: backend.socket, name: 'alice', session: 'alice-1' });
            agents.push(bob, carol, alice);
            await carol.close();
            await link.and(frame.locator('[data-state="linked"]')).waitFor({ timeout: 30_000 });
            const bobRow = link.locator('.link-agent[data-address="bob@frontend"]');
            const carolRow = link.locator('.link-agent[data-address="carol@frontend"]');
            await waitUntil(
              async () =>
                (await bobRow.count()) === 1 &&
                (await bobRow.innerText()).includes('1 live') &&
                (await carolRow.count()) === 1 &&
                (await carolRow.innerText()).includes('offline'),
              30_000,
              'bob live and carol offline under frontend',
            );
            assert.equal(await link.locator('.link-name').innerText(), 'frontend');
            assert.equal(await link.locator('.link-state').innerText(), 'hub reachable');
            assert.match(await link.locator('.link-description').innerText(), /nothing queued/);
            assert.equal(await link.locator('.link-queued').count(), 0);
            assert.equal(
              await frame.locator('.links-here').innerText(),
              'This repository is backend: its agents are NAME@backend there.',
            );
            assert.match((await link.locator('.link-head').getAttribute('title')) ?? '', /delivered now/);

            // bob@frontend to the person here: in this window's inbox, with its origin, as text.
            const toMaria = await bob.ok('send_handoff', { to: 'maria@backend', body: HOSTILE, sla_seconds: 600 });
            const row = frame.locator(`article.inbox-row[data-id="${toMaria.message_id}"]`);
            await row.waitFor({ timeout: 30_000 });
            assert.equal(await row.locator('.from').innerText(), 'bob@frontend');
            assert.equal((await row.locator('.origin').innerText()).trim(), 'frontend');
            assert.match((await row.getAttribute('title')) ?? '', /from the linked repository frontend/);
            assert.equal(await row.locator('.preview').innerText(), HOSTILE, 'the body shows as text');
            assert.equal(await frame.locator('img, a[href^="command:"]').count(), 0, 'no element made from it');
            await shot('dark-linked');

            // frontend's hub stops: not reachable, and what is sent to it waits, counted.
            await bob.close();
            await frontend.stop();
            await link.and(frame.locator('[data-state="down"]')).waitFor({ timeout: 30_000 });
            const queued = await alice.ok('send_handoff', { to: 'bob@frontend', body: 'while your hub is down' });
            assert.equal(queued.state, 'queued');
            await link.locator('.link-description', { hasText: '1 queued' }).waitFor({ timeout: 15_000 });
            assert.equal((await link.locator('.link-queued').innerText()).trim(), '1');
            assert.match(await link.locator('.link-state').innerText(), /hub not running/);
            await shot('dark-down');
            await pickTheme(page, LIGHT);
            await shot('light-down');

            // Its hub back: the queue drains, bob gets it once.
            frontend = await frontend.restart();
            const bob2 = await connectAgent({ socket: frontend.socket, name: 'bob', session: 'bob-2' });
            agents.push(bob2);
            await waitUntil(
              () => bob2.pushes.some((p) => p.meta.message_id === queued.message_id),
              30_000,
              'the queued handoff pushed to bob',
            );
            await link.locator('.link-description', { hasText: 'nothing queued' }).waitFor({ timeout: 30_000 });
            await link.and(frame.locator('[data-state="linked"]')).waitFor({ timeout: 30_000 });
            await bobRow.filter({ hasText: '1 live' }).waitFor({ timeout: 30_000 });
            assert.equal(bob2.pushes.filter((p) => p.meta.message_id === queued.message_id).length, 1);
            await shot('light-linked');

            // Unlink from the view: it asks first; Cancel changes nothing.
            const unlink = link.locator('vscode-icon[data-action="unlink"]');
            const dialog = page.locator('.monaco-dialog-box');
            await link.hover();
            await unlink.click();
            await dialog.filter({ hasText: 'Unlink frontend?' }).waitFor({ timeout: 15_000 });
            assert.match(await dialog.innerText(), /Nothing flows to or from/);
            await dialog.locator('.monaco-button', { hasText: 'Cancel' }).click();
            await dialog.waitFor({ state: 'hidden' });
            assert.equal((await linksOf(backend as HubProcess)).links[0].state, 'linked');
            await link.hover();
            await unlink.click();
            await dialog.locator('.monaco-button', { hasText: /^Unlink$/ }).click();
            await link.and(frame.locator('[data-state="unlinked"]')).waitFor({ timeout: 15_000 });
            assert.equal(await link.locator('vscode-icon[data-action="unlink"]').count(), 0);
            // The other side is refused at its next hello: it waits for this one to link back.
            await linkState(frontend, workspace, 'waiting');
          },
        });
        assert.equal(res.exitCode, 0, runFailure(res));
        assert.deepEqual(cspViolations, [], 'no CSP violations');
        assert.deepEqual(dialogs, [], 'no script from the other repository ran');
        console.log(`screenshots: ${shots.join(', ')}`);
      } finally {
        await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
        await frontend.stop();
      }
    },
  );
});

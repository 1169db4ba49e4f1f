// Never cut off, in the real VS Code (the VS Code server, driven by Playwright in headless
// Chromium): an agent started in an integrated terminal (the MCP SDK client over the real bridge,
// terminalAgent.mjs) keeps receiving and ACKing handoffs after Developer: Reload Window and after
// Handoff: Restart Hub — the same agent process throughout, nobody restarting it. Counted: pushes
// per handoff (once), ACKs, and how long from each new hub to the agent being live on it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import type { Page } from 'playwright-core';
import { connectAgent, type Agent } from '../helpers/agent';
import { waitUntil } from '../helpers/wait';
import { NODE, ROOT } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runCommand, runVsCode, statusBarItem } from '../vscode/harness.mjs';
import { hubProcesses, hubSocket } from '../vscode/processes';

const missing = vscodeMissing();
announce('the continuity end-to-end test', missing);

interface Entry {
  ready?: number;
  push?: string;
  replayed?: string;
  ack?: string;
  ok?: boolean;
  at: number;
}

const until = <T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> => waitUntil(probe, timeoutMs, what);

describe('Never cut off, in a real VS Code', () => {
  itNeeds(
    missing,
    'an agent in an integrated terminal keeps receiving and ACKing handoffs across Reload Window and Restart Hub',
    { timeout: 240_000 },
    async () => {
      let alice: Agent | undefined;
      const figures: string[] = [];
      const res = await runVsCode({
        extensionPath: ROOT,
        viewport: { width: 1280, height: 800 },
        // The DOM renderer, so the terminal's text (the shell's prompt) can be read from the page.
        userSettings: { 'terminal.integrated.gpuAcceleration': 'off' },
        timeoutMs: 210_000,
        onPage: async (page: Page, ctx) => {
          const log = join(ctx.tempDir, 'terminal-agent.jsonl');
          const entries = (): Entry[] =>
            existsSync(log)
              ? readFileSync(log, 'utf8')
                  .trim()
                  .split('\n')
                  .filter(Boolean)
                  .map((l) => JSON.parse(l) as Entry)
              : [];
          await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
          const socket = await hubSocket(ctx.workspace);
          const firstHub = hubProcesses(ctx.workspace)[0].pid;

          // The agent, started in an integrated terminal as a person would start a CLI.
          await runCommand(page, 'Terminal: Create New Terminal');
          await page.locator('.terminal-wrapper.active .xterm').first().waitFor({ timeout: 30_000 });
          await until(
            'the shell to draw its prompt',
            async () =>
              (
                await page
                  .locator('.terminal-wrapper.active .xterm-rows')
                  .first()
                  .innerText()
                  .catch(() => '')
              ).trim() !== '',
          );
          await page.keyboard.type(
            `${NODE} ${join(ROOT, 'test', 'e2e', 'terminalAgent.mjs')} ${ROOT} ${log} bob ${ctx.workspace}`,
          );
          await page.keyboard.press('Enter');
          const agentPid = (await until('the terminal agent to connect', () => entries().find((e) => e.ready)))!.ready!;
          alice = await connectAgent({ socket, name: 'alice' });
          await until('bob live', async () =>
            (await alice!.ok('list_peers')).peers.some((p: any) => p.identity === 'bob' && p.live_sessions === 1),
          );

          const handoff = async (body: string) => {
            const id = (await alice!.ok('send_handoff', { to: 'bob', body })).message_id as string;
            await until(`bob's ACK of "${body}"`, () => entries().some((e) => e.ack === id && e.ok));
            const d = (await alice!.ok('get_receipts', { message_id: id })).deliveries[0];
            assert.equal(d.state, 'acked');
            return id;
          };
          const newHub = async (old: number) =>
            until(
              'a new hub',
              () => hubProcesses(ctx.workspace).find((h) => h.pid !== old && existsSync(h.socket)),
              60_000,
            );
          const liveAgain = async (what: string, since: number) => {
            await until(
              `bob live after ${what}`,
              async () =>
                (await alice!.ok('list_peers').catch(() => ({ peers: [] }))).peers.some(
                  (p: any) => p.identity === 'bob' && p.live_sessions === 1,
                ),
              30_000,
            );
            figures.push(`${what}: bob live again ${Date.now() - since} ms after the new hub was there`);
          };

          const ids = [await handoff('before any restart')];

          await runCommand(page, 'Developer: Reload Window');
          const second = await newHub(firstHub);
          const reloadedAt = Date.now();
          await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 60_000 });
          await liveAgain('Reload Window', reloadedAt);
          ids.push(await handoff('after Reload Window'));

          await runCommand(page, 'Handoff: Restart Hub');
          const third = await newHub(second.pid);
          const restartedAt = Date.now();
          await liveAgain('Restart Hub', restartedAt);
          ids.push(await handoff('after Restart Hub'));
          assert.notEqual(third.pid, firstHub);

          const pushes = ids.map((id) => entries().filter((e) => e.push === id).length);
          assert.deepEqual(pushes, [1, 1, 1], 'each handoff pushed once to the one agent');
          assert.equal(entries().filter((e) => e.ready).length, 1, 'the agent never restarted');
          assert.ok(existsSync(`/proc/${agentPid}`), 'the same agent process throughout');
          figures.push(
            `3 handoffs, each pushed once and ACKed by agent pid ${agentPid}; hubs ${firstHub} → ${second.pid} → ${third.pid}`,
          );
        },
      });
      await alice?.close();
      for (const f of figures) console.log(`# ${f}`);
      assert.equal(res.error, undefined, `${res.error?.stack ?? ''}\n${res.logs.slice(-3000)}`);
      assert.equal(res.timedOut, false);
    },
  );
});

// "Handoff: Show Log" after a normal start in a real VS Code: every line once, at its level, so a
// start with an agent attaching and leaving reads as info, never as errors. Screenshots of the
// output view in a light and a dark theme go to .test-artifacts/e2e/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import { handoffLog } from './handoffLog';
import { connectAgent, waitFor } from '../helpers/agent';
import { ROOT } from '../helpers/hubProcess';
import { runCommand, runVsCode, statusBarItem } from '../vscode/harness.mjs';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { hubSocket } from '../vscode/processes';
import { waitUntil } from '../helpers/wait';

const missing = vscodeMissing();
announce('the Show Log end-to-end test', missing);

const ARTIFACTS = join(ROOT, '.test-artifacts', 'e2e');
const THEMES = [
  { name: 'light', theme: 'Default Light Modern' },
  { name: 'dark', theme: 'Default Dark Modern' },
];

describe('Handoff: Show Log in a real VS Code', () => {
  for (const t of THEMES) {
    itNeeds(
      missing,
      `a normal start logs each line once, at its level — ${t.name} theme`,
      { timeout: 150_000 },
      async () => {
        mkdirSync(ARTIFACTS, { recursive: true });
        let log = '';
        const res = await runVsCode({
          extensionPath: ROOT,
          userSettings: { 'workbench.colorTheme': t.theme, 'handoff.identity': 'maria' },
          viewport: { width: 1280, height: 800 },
          timeoutMs: 120_000,
          onPage: async (page, ctx) => {
            await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 30_000 });
            const builder = await connectAgent({ socket: await hubSocket(ctx.workspace), name: 'builder' });
            // The window says who sits at it once its hub runs: the person is addressable from then on.
            await waitUntil(
              async () => (await builder.ok('list_peers')).peers.some((p: any) => p.identity === 'maria' && p.person),
              30_000,
              'maria in list_peers',
            );
            await builder.ok('send_handoff', { to: 'maria', body: 'The release notes are drafted; please read them.' });
            await builder.close();
            await waitFor(() => /\(builder\) detached/.test(handoffLog(ctx.tempDir)), 20_000, 'the detach line');
            log = handoffLog(ctx.tempDir);

            await runCommand(page, 'Handoff: Show Log');
            const output = page.locator('#workbench\\.parts\\.panel');
            await output.locator('.view-lines', { hasText: 'detached' }).first().waitFor({ timeout: 20_000 });
            await output.screenshot({ path: join(ARTIFACTS, `${t.name}-log.png`) });
          },
        });
        assert.equal(res.error, undefined, `${res.error?.stack}\n${res.logs.slice(-3000)}`);
        const lines = log.split('\n').filter(Boolean);
        assert.deepEqual(
          lines.filter((l) => /\[error\]/.test(l)),
          [],
          `a normal start logged errors:\n${log}`,
        );
        assert.ok(
          lines.some((l) => /\[info\] hub: listening on /.test(l)),
          `the hub's start is logged as info:\n${log}`,
        );
        assert.ok(
          lines.some((l) => /\[info\] hub: session \S+ attached as builder \(test-builder\)/.test(l)),
          `the session is logged with its client's name:\n${log}`,
        );
        const hubLines = lines.filter((l) => / hub: /.test(l)).map((l) => l.replace(/^\S+ \S+ \[\w+\] /, ''));
        assert.equal(new Set(hubLines).size, hubLines.length, `every hub line once:\n${log}`);
      },
    );
  }
});

// A real install: `npm run package`'s .vsix, installed into the VS Code server with
// --install-extension, then a window with no Handoff development path; checks run in its
// extension host against the installed extension (test/vscode/installed/suite.js).
import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import { ROOT } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runVsCode } from './harness.mjs';
import { packageVsix } from './vsix';

const missing = vscodeMissing();
announce('the installed-.vsix suite', missing);

describe('Handoff installed from its .vsix', () => {
  itNeeds(
    missing,
    'installs into the VS Code server and runs there without a development path',
    { timeout: 240_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'handoff-vsix-'));
      const vsix = packageVsix(dir);
      console.log(`# .vsix: ${(statSync(vsix).size / 1024 / 1024).toFixed(2)} MB`);
      const probe = join(ROOT, 'test', 'vscode', 'installed');
      const res = await runVsCode({
        extensionPath: probe,
        testsPath: join(probe, 'suite.js'),
        serverArgs: ['--install-extension', vsix, '--start-server'],
        // Activation refreshes the agent launchers: in a temp dir, not the user's ~/.local/share.
        env: { XDG_DATA_HOME: join(dir, 'data') },
        timeoutMs: 180_000,
      });
      const lines = res.logs
        .split('\n')
        .filter((l) => /install-probe|Error|rror:|Installing|installed/.test(l))
        .join('\n');
      assert.equal(
        res.exitCode,
        0,
        `the probe suite failed (timed out: ${res.timedOut}):\n${lines}\n${res.error?.stack ?? ''}`,
      );
      assert.match(res.logs, /\[install-probe\] installed Handoff/);
      console.log(`# ${/\[install-probe\] (activation .*)/.exec(res.logs)?.[1] ?? 'activation time not reported'}`);
    },
  );
});

// The editor harness can go red: a deliberately failing extension-host suite (the throwaway sample
// extension in test/vscode/sample) must give a non-zero exit code with the assertion in the logs.
// Without this, `exitCode === 0` in editor.test.ts could be a harness that never reports failure.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe } from 'node:test';
import { ROOT } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runVsCode } from './harness.mjs';

const missing = vscodeMissing();
announce('the VS Code harness self-check', missing);
const sample = join(ROOT, 'test', 'vscode', 'sample');

describe('the VS Code harness', () => {
  itNeeds(
    missing,
    'a failing extension-host suite exits non-zero, with its assertion in the logs',
    { timeout: 180_000 },
    async () => {
      const res = await runVsCode({
        extensionPath: sample,
        testsPath: join(sample, 'suite', 'failing.js'),
        timeoutMs: 120_000,
      });
      assert.equal(res.timedOut, false, `timed out:\n${res.logs.split('\n').slice(-40).join('\n')}`);
      assert.notEqual(res.exitCode, null);
      assert.notEqual(res.exitCode, 0, 'a failing suite must not look green');
      assert.match(res.logs, /this is not what it returns/, 'the assertion error reaches the logs');
    },
  );
});

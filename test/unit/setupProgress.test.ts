// The installers' steps under HANDOFF_SETUP_PROGRESS (what `npm start` sets): each step says what
// it does and where its log is when it starts, how far it is while it runs, and when it is done —
// the first `npm start` was silent for 147 s while the VS Code server's native modules compiled.
// Run through .ci/lib.sh itself, with a step that takes a few seconds and writes its own log lines.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/hubProcess';
import { tempDir } from '../helpers/tempDir';

const script = (tools: string, progress: string | undefined) =>
  spawnSync(
    'bash',
    [
      '-c',
      `set -euo pipefail; source "${join(ROOT, '.ci', 'lib.sh')}"; setup_begin demo; ` +
        `step "compile the native modules" bash -c 'for i in 1 2 3 4; do echo "building module $i"; sleep 1; done'; ` +
        'setup_done "installed the demo"',
    ],
    {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, HANDOFF_TOOLS: tools, ...(progress ? { HANDOFF_SETUP_PROGRESS: progress } : {}) },
    },
  );

describe('installer progress', () => {
  it('says the step, its log, how far it is, and when it is done', () => {
    const tools = tempDir('setup-progress');
    const r = script(tools, '1');
    assert.equal(r.status, 0, r.stderr);
    const log = join(tools, 'logs', 'demo.log');
    assert.match(r.stderr, new RegExp(`^\\[demo\\] compile the native modules… \\(log: ${log}\\)$`, 'm'));
    assert.match(
      r.stderr,
      /^\[demo\] {3}compile the native modules: \d+s so far, \d+ lines of log; last: building module \d$/m,
    );
    assert.match(r.stderr, /^\[demo\] {3}compile the native modules: done in \d+s$/m);
    assert.match(r.stderr, /^\[demo\] installed the demo in \d+s$/m);
  });

  it('without it, one line for the whole install (the test setup)', () => {
    const r = script(tempDir('setup-quiet'), undefined);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stderr.trim().split('\n'), [r.stderr.trim().split('\n')[0]]);
    assert.match(r.stderr, /^\[demo\] installed the demo in \d+s\n$/);
  });
});

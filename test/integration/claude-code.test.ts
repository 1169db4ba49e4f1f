// A real MCP client nobody here wrote: the Claude Code CLI lists the bridge as connected.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { DIST, NODE, ROOT, startHub, tempDir } from '../helpers/hubProcess';
import { claudeMissing, skipOrFail } from '../helpers/tools.mjs';

const run = promisify(execFile);
const CLAUDE = join(ROOT, 'node_modules', '.bin', 'claude');

describe('Claude Code CLI', () => {
  it('`claude mcp list` shows the bridge ✔ Connected to a running hub; without one the stand-in still completes the handshake (its tools tell the model why)', async (t) => {
    const missing = claudeMissing(ROOT);
    if (missing) return skipOrFail(t, missing);
    const home = tempDir('claude-home');
    const project = tempDir('claude-project');
    const hub = await startHub();
    const env = {
      ...process.env,
      HOME: home,
      HANDOFF_HUB: hub.socket,
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };
    try {
      await run(
        CLAUDE,
        ['mcp', 'add', '--scope', 'local', 'handoff', '--', NODE, join(DIST, 'bridge.js'), '--name', 'claude-test'],
        { cwd: project, env },
      );
      const { stdout } = await run(CLAUDE, ['mcp', 'list'], { cwd: project, env, timeout: 60_000 });
      assert.match(stdout, /handoff: .*bridge\.js --name claude-test - ✔ Connected/);
    } finally {
      await hub.stop();
    }
    const { stdout } = await run(CLAUDE, ['mcp', 'list'], { cwd: project, env, timeout: 60_000 });
    // The model learns "no hub" from the stand-in's tool (hub-lifecycle.test.ts); the CLI sees a server.
    assert.match(stdout, /handoff: .*bridge\.js --name claude-test - ✔ Connected/);
  });
});

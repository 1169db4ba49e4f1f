// A real MCP client nobody here wrote: the Claude Code CLI lists the bridge as connected.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { DIST, NODE, ROOT, startHub, tempDir } from '../helpers/hubProcess';
import { claudeMissing, skipOrFail } from '../helpers/tools.mjs';
import { connectAgent } from '../../extension/shared/connect';
import { workspaceOf } from '../../extension/shared/paths';

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

describe('Claude Code CLI in a workspace folder inside a larger repository', () => {
  it('`handoff connect claude` run in the subfolder and the editor’s Connect for a window on it write the same, and `claude mcp list` there shows ✔ Connected', async (t) => {
    const missing = claudeMissing(ROOT);
    if (missing) return skipOrFail(t, missing);
    const home = tempDir('claude-home');
    const root = join(realpathSync(tempDir('monorepo')), 'R');
    const web = join(root, 'packages', 'web');
    mkdirSync(web, { recursive: true });
    writeFileSync(join(web, 'package.json'), '{}'); // a marker that made it a workspace of its own before
    execFileSync('git', ['init', '-q', root]);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      XDG_DATA_HOME: join(home, '.local', 'share'),
    };
    delete env.HANDOFF_HUB;
    const data = env.XDG_DATA_HOME!;
    const hub = await startHub({ workspace: root, socket: null, env: { HOME: home } });
    try {
      const said = (await run(NODE, [join(DIST, 'cli.js'), 'connect', 'claude'], { cwd: web, env })).stdout;
      assert.match(said, new RegExp(`connected for the repository ${root} `), said);
      // The editor's Connect for a window on the subfolder: the same folder, so nothing left to write.
      const editor = await connectAgent('claude', {
        workspace: workspaceOf(web),
        folder: web,
        launch: { node: join(data, 'handoff', 'bin', 'node'), dist: join(data, 'handoff', 'dist') },
        home,
      });
      assert.equal(editor.workspace, root);
      assert.deepEqual(editor.changes, [], 'the CLI and the editor write the same');
      const { stdout } = await run(CLAUDE, ['mcp', 'list'], { cwd: web, env, timeout: 60_000 });
      assert.match(stdout, /handoff: .*bridge\.js --cli claude --workspace \S+ - ✔ Connected/, stdout);
      assert.match(hub.log(), /attached as claude/, 'the bridge Claude Code started reached the repository’s hub');
    } finally {
      await hub.stop();
    }
  });
});

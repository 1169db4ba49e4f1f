// `handoff connect` edits other programs' config files: it must keep every other entry, be
// idempotent, remove exactly what it added, and (Codex) trust its hooks the way Codex hashes them.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connectAgent, disconnectAgent } from '../../extension/shared/connect';
import { codexHookHash } from '../../extension/shared/connect/codexTrust';
import { refreshLaunchers } from '../../extension/shared/connect/launchers';
import { tempDir } from '../helpers/hubProcess';

const launch = { node: '/opt/node/bin/node', dist: '/opt/handoff/dist' };
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

describe('handoff connect / disconnect', () => {
  it('Codex hook trust: the hash Codex 0.171 computes (hooks/list currentHash)', () => {
    assert.equal(
      codexHookHash('PostToolUse', '*', { type: 'command', command: 'node /tmp/x.js post', timeout: 5 }),
      'sha256:aa3d8d0803d376e09fee6f9574daef52f831cd162b7706068eb6ec2c48c42d5d',
    );
    assert.equal(
      codexHookHash('Stop', undefined, { type: 'command', command: 'node /tmp/x.js stop' }),
      'sha256:0997d4f9e816be92c5ba6ccb1a9e53db3d3adbca44d5ae86a5e3bb65193539d3',
    );
    assert.equal(
      codexHookHash('UserPromptSubmit', 'ignored', { type: 'command', command: 'echo u', timeout: 2 }),
      'sha256:40cb7a7d039621d347b299cbc49706c2bdabdb65cea55e5018d49c6ddf43d7fb',
    );
    assert.equal(
      codexHookHash('SessionStart', 'startup|resume', {
        type: 'command',
        command: 'echo hi',
        timeout: 3,
        statusMessage: 'hi',
      }),
      'sha256:eb90a196dcd2e2559abc3c98eb9f245ff7d56cd06033f0413b7c888b3b86d07e',
    );
  });

  it('launchers: configs name a stable Node and build that each activation re-points; a vanished Node says so', () => {
    const dir = tempDir('launchers');
    const distA = tempDir('dist-a');
    const distB = tempDir('dist-b');
    writeFileSync(join(distA, 'probe.js'), 'console.log("A", process.env.ELECTRON_RUN_AS_NODE ?? "-")');
    writeFileSync(join(distB, 'probe.js'), 'console.log("B", process.env.ELECTRON_RUN_AS_NODE ?? "-")');
    const a = refreshLaunchers(dir, process.execPath, distA, false);
    assert.equal(execFileSync(a.node, [join(a.dist, 'probe.js')], { encoding: 'utf8' }).trim(), 'A -');
    const b = refreshLaunchers(dir, process.execPath, distB, true); // an update: same paths, new build
    assert.deepEqual(b, a, 'the paths in agent configs do not change');
    assert.equal(
      execFileSync(b.node, [join(b.dist, 'probe.js')], { encoding: 'utf8' }).trim(),
      'B 1',
      "the desktop editor's binary runs as Node",
    );
    refreshLaunchers(dir, join(dir, 'gone', 'node'), distB, false);
    const r = spawnSync(a.node, ['-e', '0'], { encoding: 'utf8' });
    assert.equal(r.status, 127);
    assert.match(r.stderr, /is gone: the editor was updated or removed\. Open the folder in VS Code with Handoff once/);
  });

  for (const cli of ['claude', 'codex', 'gemini', 'vscode'] as const) {
    it(`${cli}: keeps the user's entries, is idempotent, and disconnect restores the files`, async () => {
      const home = tempDir(`connect-${cli}-home`);
      const workspace = tempDir(`connect-${cli}-ws`);
      const codexHome = join(home, '.codex');
      const files: Record<string, string> =
        cli === 'claude'
          ? {
              [join(home, '.claude.json')]: '{\n  "theme": "dark",\n  "projects": {}\n}\n',
              [join(workspace, '.claude', 'settings.local.json')]:
                JSON.stringify(
                  {
                    permissions: { allow: ['Bash(ls)'] },
                    hooks: { PostToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier' }] }] },
                  },
                  null,
                  2,
                ) + '\n',
            }
          : cli === 'codex'
            ? {
                [join(codexHome, 'config.toml')]: 'model = "o4"\n\n[mcp_servers.other]\ncommand = "other"\n',
                [join(codexHome, 'hooks.json')]:
                  JSON.stringify(
                    { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] } },
                    null,
                    2,
                  ) + '\n',
              }
            : cli === 'gemini'
              ? {
                  [join(workspace, '.gemini', 'settings.json')]:
                    JSON.stringify({ mcpServers: { other: { command: 'x' } }, ui: { theme: 'GitHub' } }, null, 2) +
                    '\n',
                }
              : {
                  // The user's own hook in our file stays (VS Code's flat format: no groups).
                  [join(workspace, '.github', 'hooks', 'handoff.json')]:
                    JSON.stringify({ hooks: { Stop: [{ type: 'command', command: 'notify-send done' }] } }, null, 2) +
                    '\n',
                };
      for (const [p, text] of Object.entries(files)) {
        mkdirSync(join(p, '..'), { recursive: true });
        writeFileSync(p, text);
      }
      const o = { workspace, folder: workspace, name: 'rev', launch, home, codexHome };
      const first = (await connectAgent(cli, o)).changes;
      assert.ok(
        first.length >= (cli === 'vscode' ? 1 : 2),
        `says what it wrote where: ${first.map((c) => c.path).join(', ')}`,
      );
      assert.deepEqual((await connectAgent(cli, o)).changes, [], 'a second connect changes nothing');

      if (cli === 'claude') {
        const user = json(join(home, '.claude.json'));
        assert.equal(user.theme, 'dark');
        assert.deepEqual(user.projects[workspace].mcpServers.handoff.args, [
          '/opt/handoff/dist/bridge.js',
          '--cli',
          'claude',
          '--name',
          'rev',
          '--workspace',
          workspace,
        ]);
        const hooks = json(join(workspace, '.claude', 'settings.local.json')).hooks;
        assert.equal(hooks.PostToolUse.length, 2, "the user's PostToolUse hook stays beside ours");
        assert.ok(
          hooks.Stop.some((g: any) => g.hooks[0].asyncRewake === true),
          'an idle waiter at each turn end',
        );
      } else if (cli === 'codex') {
        const toml = readFileSync(join(codexHome, 'config.toml'), 'utf8');
        assert.match(toml, /^model = "o4"$/m);
        assert.equal(toml.match(/^\[mcp_servers\.handoff\]$/gm)?.length, 1);
        assert.equal(toml.match(/^\[hooks\.state\./gm)?.length, 4, 'each of our four hooks is trusted');
        assert.match(toml, new RegExp(`hooks\\.json:stop:1:0`), "ours follows the user's Stop hook");
      } else if (cli === 'vscode') {
        const hooks = json(join(workspace, '.github', 'hooks', 'handoff.json')).hooks;
        assert.deepEqual(Object.keys(hooks).sort(), ['PostToolUse', 'SessionStart', 'Stop', 'UserPromptSubmit']);
        assert.equal(hooks.Stop.length, 2, "the user's Stop hook stays beside ours");
        assert.match(hooks.Stop[1].command, /hook\.js vscode Stop --name rev /);
      } else {
        const settings = json(join(workspace, '.gemini', 'settings.json'));
        assert.equal(settings.mcpServers.handoff.trust, true);
        assert.ok(settings.mcpServers.other);
        assert.deepEqual(Object.keys(settings.hooks).sort(), [
          'AfterAgent',
          'AfterTool',
          'BeforeAgent',
          'SessionStart',
        ]);
        assert.equal(json(join(home, '.gemini', 'trustedFolders.json'))[workspace], 'TRUST_FOLDER');
      }

      const removed = disconnectAgent(cli, o);
      assert.ok(removed.length >= 1);
      for (const [p, text] of Object.entries(files)) {
        const now = readFileSync(p, 'utf8');
        if (cli === 'claude' && p.endsWith('.claude.json'))
          assert.deepEqual(json(p).projects[workspace].mcpServers, {}, 'the server is gone');
        else
          assert.deepEqual(
            cli === 'codex' && p.endsWith('.toml') ? now.trimEnd() : JSON.parse(now),
            cli === 'codex' && p.endsWith('.toml') ? text.trimEnd() : JSON.parse(text),
            `${p} is back to what the user had`,
          );
      }
      assert.deepEqual(disconnectAgent(cli, o), [], 'a second disconnect changes nothing');
    });
  }

  it('disconnect takes away files connect made: no `{}` left behind', async () => {
    const home = tempDir('connect-empty-home');
    const workspace = tempDir('connect-empty-ws');
    const o = { workspace, folder: workspace, name: 'rev', launch, home, codexHome: join(home, '.codex') };
    for (const cli of ['claude', 'gemini', 'vscode'] as const) {
      await connectAgent(cli, o);
      disconnectAgent(cli, o);
    }
    for (const p of [
      join(workspace, '.claude', 'settings.local.json'),
      join(workspace, '.gemini', 'settings.json'),
      join(workspace, '.github', 'hooks', 'handoff.json'),
    ])
      assert.equal(existsSync(p), false, `${p} is gone`);
  });

  it("in git, a checkout's recorded name is changed only with rename, and says what it was", async () => {
    const home = tempDir('connect-rename-home');
    const repo = tempDir('connect-rename-repo');
    execFileSync('git', ['init', '-q', repo]);
    const o = { workspace: repo, folder: repo, launch, home, codexHome: join(home, '.codex') };
    assert.equal((await connectAgent('codex', { ...o, name: 'reviewer' })).name, 'reviewer');
    await assert.rejects(
      () => connectAgent('codex', { ...o, name: 'reviwer' }),
      /already "reviewer"; mail to "reviewer" stays with that name\. To rename it to "reviwer", connect again with --rename/,
    );
    const renamed = await connectAgent('codex', { ...o, name: 'reviwer', rename: true });
    assert.equal(renamed.name, 'reviwer');
    assert.match(renamed.changes[0].what, /is "reviwer" \(was "reviewer"\)/);
  });

  it('a config another program rewrote in its own layout, saying the same, is not written again', async () => {
    const home = tempDir('connect-layout-home');
    const workspace = tempDir('connect-layout-ws');
    const o = { workspace, folder: workspace, name: 'rev', launch, home, codexHome: join(home, '.codex') };
    await connectAgent('claude', o);
    const user = join(home, '.claude.json');
    writeFileSync(user, JSON.stringify(json(user))); // Claude Code keeps it on one line
    assert.deepEqual((await connectAgent('claude', o)).changes, [], 'nothing to change');
  });
});

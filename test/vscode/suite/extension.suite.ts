// The real extension in a real VS Code: hub supervision, terminal env, the panel's model of a
// handoff between two real agents (MCP SDK clients over the real bridge), the SLA warning in the
// status bar, crash detection and restart, Copilot's MCP definition and the Codex config.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as vscode from 'vscode';
import { launcherDir } from '../../../extension/shared/connect/launchers';
import type { HandoffApi } from '../../../extension/client/extension';
import { connectControl } from '../../../extension/shared/controlClient';
import { hubSocketPath } from '../../../extension/shared/paths';
import { connectAgent, waitFor, type Agent } from '../../helpers/agent';
import { skipOrFail } from '../../helpers/skip.mjs';

const EXTENSION_ID = 'handoff.handoff-bus';
const run = promisify(execFile);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function eventually<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  let value: T | undefined | false;
  await waitFor(() => !!(value = probe()), timeoutMs, what);
  return value as T;
}

describe('Handoff in a real VS Code', () => {
  let api: HandoffApi;
  const agents: Agent[] = [];

  before(async () => {
    const ext = vscode.extensions.getExtension<HandoffApi>(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is loaded`);
    api = await ext.activate();
  });

  after(async () => {
    await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  });

  async function agent(name: string): Promise<Agent> {
    const a = await connectAgent({ socket: api.location.socket, name, session: `${name}-${Date.now()}` });
    agents.push(a);
    return a;
  }

  it('activation starts the hub on the workspace socket, and it answers', async () => {
    await eventually('hub running', () => api.hubState().kind === 'running');
    const pid = api.hubPid();
    assert.ok(pid && alive(pid), 'the hub process is alive');
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    assert.equal(
      api.location.socket,
      hubSocketPath(folder),
      'socket derived from the folder, so stable across reloads',
    );
    assert.ok(existsSync(api.location.socket), 'socket exists');
    const control = await connectControl(api.location.socket, 'suite');
    try {
      assert.equal(control.hub.pid, pid, 'the process on the socket is the supervised hub');
    } finally {
      control.close();
    }
    await eventually('first snapshot', () => api.snapshot());
    assert.match(api.statusBar().text, /Handoff/);
  });

  it('an integrated terminal gets HANDOFF_HUB, and our handoff command first on PATH', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'handoff-term-')), 'env.txt');
    const term = vscode.window.createTerminal({
      name: 'env probe',
      shellPath: '/bin/sh',
      shellArgs: [
        '-c',
        `{ printf '%s\\n' "$HANDOFF_HUB" "$(command -v handoff)"; handoff --help | head -1; } > ${out}.tmp; mv ${out}.tmp ${out}`,
      ],
    });
    try {
      const value = await eventually(
        'the terminal to write its env',
        () => existsSync(out) && readFileSync(out, 'utf8'),
      );
      const [hub, handoff, usage] = value.split('\n');
      assert.equal(hub, api.location.socket);
      assert.equal(handoff, join(launcherDir(), 'bin', 'handoff'), 'the launcher activation keeps, not a registry bin');
      assert.equal(usage, 'usage: handoff <command> [options]', 'and it runs our CLI');
    } finally {
      term.dispose();
    }
  });

  it('two bridge clients hand off and the panel model shows each receipt', async () => {
    const alice = await agent('alice');
    const bob = await agent('bob');
    const sent = await alice.ok('send_handoff', {
      to: 'bob',
      body: 'Review the parser change, please',
      sla_seconds: 600,
    });
    assert.equal(sent.state, 'pushed');
    const id: string = sent.message_id;
    const row = () => api.panelModel().events.find((e) => e.id === id);
    const bobState = () => row()?.recipients.find((r) => r.identity === 'bob');

    await eventually('pushed in the model', () => bobState()?.state === 'pushed');
    assert.equal(row()!.from, 'alice');
    assert.deepEqual(row()!.to, ['bob']);
    assert.equal(row()!.preview, 'Review the parser change, please');
    assert.match(bobState()!.label, /^pushed · 1 session$/);
    assert.ok(
      api.panelModel().pending.some((e) => e.id === id),
      'in the pending ledger',
    );

    await bob.waitForPushes(1);
    await bob.ok('mark_read', { message_id: id });
    await eventually('read', () => bobState()?.state === 'read');
    assert.match(bobState()!.label, /^read · \d\d:\d\d:\d\d$/);

    await bob.ok('ack', { message_id: id });
    await eventually('ACK', () => bobState()?.state === 'acked');
    assert.match(bobState()!.label, /^ACK · \d\d:\d\d:\d\d$/);
    assert.match(bobState()!.detail, /ack by bob, written from its MCP session, session s-[0-9a-f]{12}, node /);

    await bob.ok('report_result', { message_id: id, outcome: 'done', summary: 'Looks good' });
    await eventually('done', () => bobState()?.state === 'done');
    assert.equal(bobState()!.tone, 'ok');

    const model = api.panelModel();
    assert.deepEqual(model.sessions.map((s) => s.identity).sort(), ['alice', 'bob']);
    const bobCoverage = model.coverage.find((c) => c.identity === 'bob');
    assert.equal(bobCoverage?.acked, 1);
    assert.equal(bobCoverage?.addressed, 1);
    assert.ok(!model.pending.some((e) => e.id === id), 'done items leave the pending ledger');
  });

  it('the status bar warns once a short SLA lapses, names the item, and clears after the ACK', async () => {
    const carol = await agent('carol');
    const dave = await agent('dave');
    assert.doesNotMatch(api.statusBar().text, /overdue/);
    const sent = await carol.ok('send_handoff', { to: 'dave', body: 'Ship the release notes', sla_seconds: 1 });
    const id: string = sent.message_id;

    const warned = await eventually(
      'overdue warning',
      () => api.statusBar().background === 'warning' && api.statusBar(),
      10_000,
    );
    assert.match(warned.text, /^\$\(warning\) 1 overdue · \d+s$/);
    assert.match(warned.tooltip, /carol → dave \(pushed\), sent \d+s ago: Ship the release notes/);
    assert.equal(warned.command, 'handoff.showOverdue');
    const overdueRow = api.panelModel().events.find((e) => e.id === id);
    assert.equal(overdueRow?.overdue, true);
    assert.equal(overdueRow?.recipients[0].icon, 'warning');

    await dave.ok('ack', { message_id: id });
    const cleared = await eventually(
      'warning cleared',
      () => api.statusBar().background === undefined && api.statusBar(),
    );
    assert.doesNotMatch(cleared.text, /overdue/);
  });

  it('Copilot gets an MCP definition that reaches this hub', async () => {
    const def = api.copilotServer();
    const client = new Client({ name: 'copilot-probe', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: def.command,
      args: def.args,
      env: { ...(process.env as Record<string, string>), ...(def.env as Record<string, string>) },
      cwd: def.cwd?.fsPath,
    });
    await client.connect(transport);
    try {
      const who = await client.callTool({ name: 'whoami', arguments: {} });
      assert.equal((who.structuredContent as { identity?: string }).identity, 'copilot');
      await eventually('copilot in the panel', () => api.panelModel().sessions.some((s) => s.identity === 'copilot'));
    } finally {
      await client.close();
    }
  });

  it('"Connect Codex" writes the server table with env_vars naming HANDOFF_HUB, TMUX and TMUX_PANE and keeps the rest', async () => {
    const home = process.env.CODEX_HOME;
    assert.ok(home, 'the runner sets CODEX_HOME to a temp dir');
    const file = join(home, 'config.toml');
    writeFileSync(file, 'model = "o4"\n\n[mcp_servers.other]\ncommand = "other"\n');
    assert.equal(await vscode.commands.executeCommand('handoff.connectCodex', { name: 'codex' }), true);
    assert.equal(
      await vscode.commands.executeCommand('handoff.connectCodex', { name: 'codex' }),
      true,
      'a second run replaces, not duplicates',
    );
    const hooks = JSON.parse(readFileSync(join(home, 'hooks.json'), 'utf8')) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    assert.deepEqual(
      Object.keys(hooks.hooks).sort(),
      ['PostToolUse', 'SessionStart', 'Stop', 'UserPromptSubmit'],
      'one set of hooks, however often it ran',
    );
    assert.ok(
      Object.values(hooks.hooks).every(
        (groups) => groups.length === 1 && groups[0].hooks[0].command.includes('hook.js'),
      ),
    );
    const toml = readFileSync(file, 'utf8');
    assert.match(toml, /^model = "o4"$/m);
    assert.match(toml, /^\[mcp_servers\.other\]\ncommand = "other"$/m);
    assert.equal(toml.match(/^\[mcp_servers\.handoff\]$/gm)?.length, 1);
    assert.match(toml, /^env_vars = \["HANDOFF_HUB", "TMUX", "TMUX_PANE"\]$/m);
    // The table is JSON-compatible TOML: launch exactly what Codex would, with HANDOFF_HUB forwarded.
    const table = toml.split('[mcp_servers.handoff]')[1];
    const command = JSON.parse(table.match(/^command = (".*")$/m)![1]) as string;
    const args = JSON.parse(table.match(/^args = (\[.*\])$/m)![1]) as string[];
    assert.equal(
      command,
      join(launcherDir(), 'bin', 'node'),
      'a launcher that survives editor updates, not the versioned Node',
    );
    assert.ok(readFileSync(command, 'utf8').includes(process.execPath), 'which activation pointed at this Node');
    assert.ok(args[0].startsWith(join(launcherDir(), 'dist')), 'the build through the stable link');
    const client = new Client({ name: 'codex-probe', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command, args, env: { HANDOFF_HUB: api.location.socket } }));
    try {
      const who = await client.callTool({ name: 'whoami', arguments: { name: 'codex' } });
      assert.equal((who.structuredContent as { identity?: string }).identity, 'codex');
    } finally {
      await client.close();
    }
  });

  it('"Disconnect Codex" removes exactly what Connect added, as handoff disconnect does', async () => {
    const file = join(process.env.CODEX_HOME!, 'config.toml');
    assert.match(readFileSync(file, 'utf8'), /^\[mcp_servers\.handoff\]$/m, 'connected by the test before');
    assert.equal(await vscode.commands.executeCommand('handoff.disconnectCodex'), true);
    const toml = readFileSync(file, 'utf8');
    assert.doesNotMatch(toml, /mcp_servers\.handoff|hooks\.state/);
    assert.match(toml, /^\[mcp_servers\.other\]\ncommand = "other"$/m, 'the rest is kept');
    const hooks = join(process.env.CODEX_HOME!, 'hooks.json');
    assert.ok(!existsSync(hooks) || !readFileSync(hooks, 'utf8').includes('hook.js'), 'no hook of ours is left');
  });

  it('"Connect Claude Code" registers the bridge with the real claude CLI, which connects it', async function () {
    // The editor's PATH comes from a login shell, so the runner names the CLI in the setting.
    const claude = vscode.workspace.getConfiguration('handoff').get<string>('claudeCommand');
    if (!claude || !existsSync(claude) || !process.env.CLAUDE_CONFIG_DIR) {
      skipOrFail(
        this,
        `the Claude Code connect test: handoff.claudeCommand (${claude}) does not exist (npm install @anthropic-ai/claude-code) or CLAUDE_CONFIG_DIR is unset`,
      );
    }
    assert.equal(await vscode.commands.executeCommand('handoff.connectClaude', { name: 'claude-ed' }), true);
    assert.equal(
      await vscode.commands.executeCommand('handoff.connectClaude', { name: 'claude-ed' }),
      true,
      'a second run replaces the entry',
    );
    const { stdout } = await run(claude!, ['mcp', 'list'], { cwd: api.location.workspace, timeout: 60_000 });
    assert.match(stdout, /^handoff: .*bridge\.js --cli claude --name claude-ed .*- ✔ Connected$/m);
    assert.equal(stdout.match(/^handoff:/gm)?.length, 1);
  });

  it('a killed hub is detected, restarted, and keeps its history', async () => {
    const before = api.hubPid()!;
    const historyId = api.panelModel().events[0]?.id;
    assert.ok(historyId, 'there is history from the earlier tests');
    const seen: string[] = [];
    const bars: string[] = [];
    const sub = api.onDidChange(() => {
      seen.push(api.hubState().kind);
      bars.push(`${api.statusBar().background ?? 'none'}:${api.statusBar().text}`);
    });
    try {
      process.kill(before, 'SIGKILL');
      await eventually(
        'restarted',
        () => api.hubState().kind === 'running' && api.hubPid() !== before && api.hubPid(),
        20_000,
      );
    } finally {
      sub.dispose();
    }
    assert.ok(seen.includes('down'), `the crash was noticed (states seen: ${seen.join(' → ')})`);
    assert.ok(
      bars.includes('error:$(error) Handoff: hub down'),
      `the status bar showed the hub down (saw ${bars.join(' | ')})`,
    );
    assert.ok(!alive(before), 'the old process is gone');
    const erin = await agent('erin');
    assert.equal((await erin.ok('whoami')).identity, 'erin');
    await eventually('history after restart', () => api.panelModel().events.some((e) => e.id === historyId));
  });
});

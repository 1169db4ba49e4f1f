// VS Code's own agent (the Copilot Chat built into the VS Code server), driven offline by a
// scripted Ollama model, runs the Claude-format hooks `handoff connect claude` installed in the
// folder — in an editor that inherited CLAUDECODE=1, the worst case. The hooks must tell VS Code's
// agent by its payload and surface nothing: bob's handoff stays unsurfaced, and (checked by the
// test outside, which holds the model's requests) never enters the VS Code agent's context.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HandoffApi } from '../../../extension/client/extension';
import { connectAgent, type Agent } from '../../helpers/agent';
import { handoffConnect, hookTraces } from '../../helpers/cli/connect';
import { waitFor, waitUntil } from '../../helpers/wait';
import { ROOT } from '../../helpers/hubProcess';

const EXTENSION_ID = 'handoff.handoff-bus';

describe("VS Code's own agent runs the Claude hooks", () => {
  let api: HandoffApi;
  const agents: Agent[] = [];

  let connected = '';

  before(async () => {
    api = await vscode.extensions.getExtension<HandoffApi>(EXTENSION_ID)!.activate();
    await waitFor(() => api.hubState().kind === 'running', 30_000, 'the hub running');
    // Tool calls auto-approved without VS Code's opt-in dialog (its context key for tests).
    await vscode.commands.executeCommand('setContext', 'vscode.chat.tools.global.autoApprove.testMode', true);
    // VS Code's agent connected as itself from the start: VS Code reads its hook files when a chat starts.
    connected = execFileSync(process.execPath, [join(ROOT, 'dist', 'cli.js'), 'connect', 'vscode'], {
      cwd: api.location.workspace,
      env: process.env,
      encoding: 'utf8',
    });
  });
  after(async () => {
    for (const a of agents) await a.close().catch(() => undefined);
  });

  it("surfaces nothing of bob's into VS Code's agent, though its editor says CLAUDECODE=1", async () => {
    const needle = process.env.HANDOFF_TEST_NEEDLE!;
    const trace = process.env.HANDOFF_HOOK_TRACE!;
    assert.equal(process.env.CLAUDECODE, '1', 'the editor inherited CLAUDECODE=1');
    const socket = api.location.socket;
    // bob's Claude Code and alice each run under an agent process of their own, not this editor.
    const bob = await connectAgent({ socket, name: 'bob', ownAgentProcess: true });
    const alice = await connectAgent({ socket, name: 'alice', ownAgentProcess: true });
    agents.push(bob, alice);
    handoffConnect('claude', api.location.workspace, process.env as Record<string, string>, 'bob');
    const sent = await alice.ok('send_handoff', { to: 'bob', body: `For bob only: ${needle}` });

    // VS Code's agent, set up without a sign-in, on the scripted model.
    assert.equal(
      await vscode.commands.executeCommand('workbench.action.chat.triggerSetupAnonymousWithoutDialog'),
      true,
    );
    let models: vscode.LanguageModelChat[] = [];
    await waitUntil(
      async () => (models = await vscode.lm.selectChatModels({ vendor: 'ollama' })).length > 0,
      60_000,
      'the scripted model listed',
    );
    await vscode.commands.executeCommand('workbench.action.chat.open', {
      query: `List the folder ${api.location.workspace}, then stop.`,
      mode: 'agent',
      modelSelector: { vendor: 'ollama', id: models[0].id },
      blockOnResponse: true,
    });

    // The Claude hooks ran in VS Code's agent turn and each stood aside, told by the payload.
    await waitFor(
      () => hookTraces(trace).some((t) => t.event === 'Stop'),
      30_000,
      () => `the Claude hooks' traces: ${JSON.stringify(hookTraces(trace))}`,
    );
    const runs = hookTraces(trace).filter((t) => t.cli === 'claude');
    assert.ok(runs.length >= 2, JSON.stringify(runs));
    assert.deepEqual(
      runs.filter((t) => t.outcome !== 'not claude code' || (t as { by?: string }).by !== 'payload'),
      [],
      'every run told VS Code by its payload',
    );
    const d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
    assert.deepEqual(d.surfaced, [], `nothing surfaced: ${JSON.stringify(d)}`);
    console.log(
      `# VS Code's agent ran the Claude hooks ${runs.length} times (${runs.map((t) => t.event).join(', ')}); surfaced 0`,
    );
  });

  it('connected as an identity of its own (handoff connect vscode), it gets its handoffs through its own hooks', async () => {
    const needle = process.env.HANDOFF_TEST_NEEDLE_COPILOT!;
    const trace = process.env.HANDOFF_HOOK_TRACE!;
    const workspace = api.location.workspace;
    const [alice] = agents.filter((a) => a.name === 'alice');
    assert.match(connected, /\.github\/hooks\/handoff\.json: 4 hooks for VS Code's agent as copilot/);
    const sent = await alice.ok('send_handoff', {
      to: 'copilot',
      body: `For VS Code's agent: ${needle}`,
      insist: true,
    });
    const before = hookTraces(trace).length;
    await vscode.commands.executeCommand('workbench.action.chat.newChat');
    const [model] = await vscode.lm.selectChatModels({ vendor: 'ollama' });
    await vscode.commands.executeCommand('workbench.action.chat.open', {
      query: `List the folder ${workspace}, then stop.`,
      mode: 'agent',
      modelSelector: { vendor: 'ollama', id: model.id },
      blockOnResponse: true,
    });
    const mine = () =>
      hookTraces(trace)
        .slice(before)
        .filter((t) => t.cli === 'vscode');
    await waitFor(
      () => mine().some((t) => t.event === 'Stop'),
      30_000,
      () => `the VS Code agent's hooks: ${JSON.stringify(hookTraces(trace).slice(before))}`,
    );
    const surfacedBy = mine().filter((t) => t.ids?.includes(sent.message_id));
    assert.equal(surfacedBy.length, 1, `surfaced by one hook run: ${JSON.stringify(mine())}`);
    let d: any;
    await waitUntil(
      async () =>
        (d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0]).surfaced.length > 0,
      10_000,
      'the surfacing recorded',
    );
    assert.equal(d.surfaced.length, 1);
    // The model ACKs it through Handoff's MCP tools (the editor's provider): from copilot's own session.
    await waitUntil(
      async () =>
        (d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0]).state === 'acked',
      30_000,
      () => `the ACK of VS Code's agent: ${JSON.stringify(d)}`,
    );
    assert.deepEqual(
      d.receipts.map((r: any) => [r.kind, r.by, r.channel]),
      [['ack', 'copilot', 'agent']],
    );
    const where = d.surfaced[0].under_no_agent
      ? 'its hook under no live agent session (the MCP server not started)'
      : `into session ${d.surfaced[0].session}`;
    console.log(
      `# VS Code's agent as copilot: its hooks ran ${mine().length} times (${mine()
        .map((t) => t.event)
        .join(', ')}); the handoff surfaced once, by ${surfacedBy[0].event}, ${where}; ACKed by its model`,
    );
  });
});

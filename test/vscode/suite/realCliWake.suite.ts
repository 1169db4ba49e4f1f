// The real Codex and Gemini TUIs, set up only by `handoff connect`, idle in an integrated terminal
// of the real VS Code (no tmux), pointed at a scripted model: a handoff arrives, this window types
// the wake line into the agent's terminal, the CLI starts a turn, its prompt hook surfaces the
// handoff and the model ACKs it — with nobody typing. Skips loudly when a CLI is not installed.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HandoffApi } from '../../../extension/client/extension';
import { connectAgent, type Agent } from '../../helpers/agent';
import { agentHome, CLI_BIN, cliInstalled, trustGeminiFolder } from '../../helpers/cli/agents';
import { handoffConnect, hookTraces } from '../../helpers/cli/connect';
import { startScriptedModel, type ScriptedModel } from '../../helpers/cli/scriptedModel';
import { NODE, tempDir } from '../../helpers/hubProcess';
import { skipOrFail } from '../../helpers/skip.mjs';
import { waitFor, waitUntil } from '../../helpers/wait';

const EXTENSION_ID = 'handoff.handoff-bus';

for (const cli of ['codex', 'gemini'] as const) {
  describe(`Waking the real ${cli} TUI in an integrated terminal`, () => {
    let api: HandoffApi;
    let alice: Agent | undefined;
    let model: ScriptedModel | undefined;
    const terminals: vscode.Terminal[] = [];

    before(async () => {
      api = await vscode.extensions.getExtension<HandoffApi>(EXTENSION_ID)!.activate();
    });

    after(async () => {
      for (const t of terminals) t.dispose();
      await model?.close();
      await alice?.close().catch(() => undefined);
    });

    it('is woken by one line typed into its terminal, sees the handoff and ACKs it', async function () {
      this.timeout(150_000);
      if (!cliInstalled(cli)) return skipOrFail(this, `${cli} CLI (npm install)`);
      await waitFor(() => api.hubState().kind === 'running', 30_000, 'the hub running');
      const workspace = api.location.workspace;
      const name = `${cli}-bob`;
      alice = await connectAgent({ socket: api.location.socket, name: `alice-${cli}` });
      const needle = `wake-${cli}-${Date.now().toString(36)}`;
      let id: string | undefined;
      let acked = false;
      model = await startScriptedModel(({ request }) => {
        if (id && !acked && request.text.includes(needle)) {
          acked = true;
          return { tool: 'ack', args: { message_id: id } };
        }
        return { text: acked ? 'ACKed the handoff.' : 'Ready.' };
      });
      const trace = join(tempDir('hook-trace'), 'trace.jsonl');
      const traces = () => hookTraces(trace);
      const home = agentHome(cli, model.url, {
        env: { HANDOFF_HOOK_TRACE: trace, HANDOFF_HUB: api.location.socket },
      });
      handoffConnect(cli, workspace, home.env, name);
      if (cli === 'gemini') trustGeminiFolder(home, workspace);
      // The terminal runs a shell that runs the CLI with exactly the agent's environment (no TMUX).
      const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
      const command = cli === 'gemini' ? [NODE, CLI_BIN.gemini] : [CLI_BIN.codex, '-C', workspace];
      const script = join(tempDir('terminal'), 'run.sh');
      writeFileSync(
        script,
        `#!/bin/sh\ncd ${q(workspace)}\nenv -i ${Object.entries(home.env)
          .map(([k, v]) => q(`${k}=${v}`))
          .join(' ')} ${command.map(q).join(' ')}\necho exited\n`,
        { mode: 0o755 },
      );
      const agentTerminal = vscode.window.createTerminal({
        name: `${cli} bob`,
        shellPath: '/bin/sh',
        shellArgs: [script],
      });
      const mine = vscode.window.createTerminal({ name: `mine ${cli}`, shellPath: '/bin/sh' });
      terminals.push(agentTerminal, mine);
      mine.show(); // the person works in their own terminal, not the agent's
      await waitFor(() => vscode.window.activeTerminal === mine, 10_000, 'the person at their own terminal');
      await waitUntil(
        async () => (await alice!.ok('list_peers')).peers.some((p: any) => p.identity === name && p.live_sessions > 0),
        90_000,
        `${name} on the bus`,
      );
      if (cli === 'gemini')
        await waitUntil(() => traces().some((x) => x.event === 'SessionStart'), 60_000, 'gemini idle');
      const requestsBefore = model.requests.length;
      const sentAt = Date.now();
      const sent = await alice.ok('send_handoff', { to: name, body: `Please look at ${needle} when you can` });
      id = sent.message_id;
      assert.equal(
        sent.recipients[0].seen_when,
        'now',
        `the sender is told the idle session is woken now; hook runs so far: ${JSON.stringify(traces())}`,
      );
      const receipts = async () => (await alice!.ok('get_receipts', { message_id: id })).deliveries[0];
      await waitUntil(
        async () => (await receipts()).state === 'acked',
        90_000,
        () => `the ACK; the window answered ${JSON.stringify(api.terminalWakes().slice(-3))}`,
      );
      const seenAt = model.requests[model.firstRequestWith(needle)].at;
      const bob = await receipts();
      const facts = `receipts ${JSON.stringify(bob)}; hook runs ${JSON.stringify(traces())}; window answers ${JSON.stringify(api.terminalWakes().slice(-3))}`;
      assert.equal(bob.surfaced.filter((x: any) => !x.replayed).length, 1, `surfaced once, by the hook: ${facts}`);
      assert.equal(model.surfacings(needle), 1, `the handoff entered the context once: ${facts}`);
      assert.equal(bob.woken?.length, 1, `one wake typed: ${facts}`);
      assert.equal(bob.woken[0].how, 'terminal');
      assert.equal(bob.woken[0].terminal, `${cli} bob`);
      assert.ok(
        model.requests.slice(requestsBefore).some((r) => r.text.includes(`New handoff from alice-${cli}`)),
        'the woken turn started from the typed line',
      );
      assert.deepEqual(model.errors, [], facts);
      console.log(
        `# ${cli} idle in a VS Code integrated terminal: first model request with the handoff ${seenAt - sentAt} ms after the send`,
      );
    });
  });
}

// VS Code's own agent, for real and offline: the Copilot Chat built into the VS Code server,
// signed in to nothing, on a scripted Ollama model on 127.0.0.1 (github.copilot.chat.byok.
// ollamaEndpoint), in an editor started with CLAUDECODE=1 as if from a Claude Code session. The
// extension-host suite (agentSuite/) installs bob's Claude hooks and runs an agent turn; here the
// model's requests are counted: the turn ran (a tool call and its result came back), and bob's
// handoff never entered VS Code's model. Skips loudly when the VS Code server is not installed.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe } from 'node:test';
import { startOllamaModel } from '../helpers/cli/ollamaModel';
import { ROOT, tempDir } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runVsCode } from './harness.mjs';

const missing = vscodeMissing();
announce("the VS Code agent's hooks test", missing);

describe("VS Code's own agent, offline, runs the hooks handoff connect installed", () => {
  itNeeds(
    missing,
    "the Claude hooks surface nothing into VS Code's agent; its own hooks bring it its own handoffs",
    { timeout: 240_000 },
    async () => {
      const needle = `vscode-agent-${Date.now().toString(36)}`;
      const forCopilot = `for-copilot-${Date.now().toString(36)}`;
      let ackTool: string | undefined;
      let acked = false;
      const model = await startOllamaModel((r) => {
        // Its own handoff in view, with Handoff's MCP tools offered: ACK it, once, as a model would.
        const id = r.text.includes(forCopilot)
          ? /<handoff-body-[0-9a-f]+ id=\\?"([^"\\]+)/.exec(r.text)?.[1]
          : undefined;
        ackTool = r.tools.find((t) => /handoff.*_ack$/i.test(t)) ?? ackTool;
        if (id && ackTool && !acked) {
          acked = true;
          return { call: ackTool, args: { message_id: id } };
        }
        // A turn that uses a tool (so the tool hooks run), then ends. The folder the prompt names
        // is inside the workspace, so no confirmation is asked.
        const tool = r.tools.find((t) => t === 'list_dir' || t === 'copilot_listDirectory');
        const folder = /List the folder (\S+), then stop\./.exec(r.text)?.[1];
        return r.last === 'user' && tool && folder ? { call: tool, args: { path: folder } } : { text: 'Listed.' };
      });
      const temp = tempDir('vscode-agent');
      try {
        const res = await runVsCode({
          extensionPath: ROOT,
          testsPath: join(ROOT, 'out', 'test', 'vscode', 'agentSuite', 'index.js'),
          env: {
            CLAUDECODE: '1',
            HANDOFF_TEST_NEEDLE: needle,
            HANDOFF_TEST_NEEDLE_COPILOT: forCopilot,
            HANDOFF_HOOK_TRACE: join(temp, 'hooks.jsonl'),
            CLAUDE_CONFIG_DIR: join(temp, 'claude'),
            // Copilot Chat keeps lock files under HOME: the run's own.
            HOME: join(temp, 'home'),
          },
          userSettings: {
            'chat.disableAIFeatures': false,
            'github.copilot.chat.byok.ollamaEndpoint': model.url,
            'chat.useClaudeHooks': true,
            // Nobody here to press "Allow" on a tool call (Handoff's ack among them); the suite sets
            // VS Code's test-mode key that stands for the opt-in dialog.
            'chat.tools.global.autoApprove': true,
          },
          timeoutMs: 200_000,
        });
        const out = res.logs
          .split('\n')
          .filter((l) => /\[(exthost|workbench):\w+\] /.test(l) || /\[harness\]/.test(l))
          .join('\n');
        // mocha's spec report, as the extension host printed it.
        console.log(
          out
            .split('\n')
            .filter((l) => /\[(exthost|workbench):\w+\] /.test(l))
            .map((l) => l.replace(/^.*\[(exthost|workbench):\w+\] /, '    '))
            .filter((l) => /✔|passing|failing|^\s+\d+\)|# /.test(l))
            .join('\n'),
        );
        const offered = [...new Set(model.requests.flatMap((r) => r.tools))].filter((t) => /handoff/i.test(t));
        const seen = model.requests.map((r) => `${r.index}:${r.last}${r.text.includes(forCopilot) ? '+own' : ''}`);
        const ackResult = model.requests
          .find((r) => r.last === 'tool' && r.text.includes(forCopilot))
          ?.text.slice(-600);
        assert.equal(
          res.exitCode,
          0,
          `the suite failed (Handoff tools offered: ${offered.join(', ') || 'none'}; requests ${seen.join(' ')}; acked ${acked}; the ack's result: ${ackResult}):\n${out.slice(-6000)}`,
        );
        const turns = model.requests.filter((r) => r.tools.length > 0);
        assert.ok(turns.length >= 2, `an agent turn with a tool round: ${model.requests.length} requests`);
        assert.ok(
          turns.some((r) => r.last === 'tool'),
          'the tool result came back to the model',
        );
        assert.deepEqual(
          model.requests.filter((r) => r.text.includes(needle)).map((r) => r.index),
          [],
          "bob's handoff never entered VS Code's model",
        );
        // Connected as itself, its own handoff did reach it.
        const first = model.requests.findIndex((r) => r.text.includes(forCopilot));
        assert.ok(first >= 0, "VS Code's agent saw its own handoff");
        assert.ok(acked, `it ACKed through Handoff's MCP tool (${ackTool ?? 'none offered'})`);
        console.log(
          `# VS Code's agent: ${model.requests.length} model requests; bob's handoff in none, its own from request ${first} on`,
        );
      } finally {
        await model.close();
      }
    },
  );
});

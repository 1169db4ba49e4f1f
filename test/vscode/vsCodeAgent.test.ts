// VS Code's own agent, for real and offline: the Copilot Chat built into the VS Code server,
// signed in to nothing, on a scripted Ollama model on 127.0.0.1 (github.copilot.chat.byok.
// ollamaEndpoint), in an editor started with CLAUDECODE=1 as if from a Claude Code session. The
// extension-host suite (agentSuite/) installs bob's Claude hooks and runs an agent turn; here the
// model's requests are counted: the turn ran (a tool call and its result came back), and bob's
// handoff never entered VS Code's model. Skips loudly when the VS Code server is not installed.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import { startOllamaModel } from '../helpers/cli/ollamaModel';
import { ROOT } from '../helpers/hubProcess';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runVsCode } from './harness.mjs';

const missing = vscodeMissing();
announce("the VS Code agent's hooks test", missing);

describe("VS Code's own agent, offline, runs the hooks handoff connect installed", () => {
  itNeeds(missing, "the Claude hooks surface nothing into VS Code's agent", { timeout: 240_000 }, async () => {
    const needle = `vscode-agent-${Date.now().toString(36)}`;
    const model = await startOllamaModel((r) => {
      // A turn that uses a tool (so the tool hooks run), then ends.
      // The folder the prompt names: inside the workspace, so no confirmation is asked.
      const tool = r.tools.find((t) => t === 'list_dir' || t === 'copilot_listDirectory');
      const folder = /List the folder (\S+), then stop\./.exec(r.text)?.[1];
      return r.last === 'user' && tool && folder ? { call: tool, args: { path: folder } } : { text: 'Listed.' };
    });
    const temp = mkdtempSync(join(tmpdir(), 'handoff-vscode-agent-'));
    try {
      const res = await runVsCode({
        extensionPath: ROOT,
        testsPath: join(ROOT, 'out', 'test', 'vscode', 'agentSuite', 'index.js'),
        env: {
          CLAUDECODE: '1',
          HANDOFF_TEST_NEEDLE: needle,
          HANDOFF_HOOK_TRACE: join(temp, 'hooks.jsonl'),
          CLAUDE_CONFIG_DIR: join(temp, 'claude'),
          // Copilot Chat keeps lock files under HOME: the run's own.
          HOME: join(temp, 'home'),
        },
        userSettings: {
          'chat.disableAIFeatures': false,
          'github.copilot.chat.byok.ollamaEndpoint': model.url,
          'chat.useClaudeHooks': true,
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
      assert.equal(res.exitCode, 0, `the suite failed:\n${out.slice(-6000)}`);
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
      console.log(`# VS Code's agent: ${model.requests.length} model requests, bob's handoff in none`);
    } finally {
      await model.close();
    }
  });
});

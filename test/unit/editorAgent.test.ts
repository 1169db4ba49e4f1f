// Who may be copilot (#42): the parent of a proven bridge decides. The commands are the ones this
// machine's VS Code server showed (test/vscode/agentHost.test.ts runs them for real): its
// extension host, its Agent Host's Copilot runtime, the Claude Agent SDK's claude, Codex.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { editorAgentRefusal, isCopilotProcess } from '../../extension/hub/presence/agentTree';
import type { ProcessCommand } from '../../extension/shared/proc';

const RUNTIME = '/x/node_modules/@github/copilot-sdk-linux-x64/prebuilds/linux-x64/copilot-runtime';
const commands: Record<number, ProcessCommand> = {
  10: { exe: 'node', argv: ['/x/node', '/x/out/bootstrap-fork', '--type=extensionHost'] },
  20: { exe: 'copilot-runtime', argv: [RUNTIME, '--headless', '--no-auto-update'] },
  30: { exe: 'claude', argv: ['/x/claude-agent-sdk-linux-x64/claude', '--output-format', 'stream-json'] },
  40: { exe: 'codex', argv: ['/x/codex', 'app-server'] },
  50: { exe: 'node', argv: ['/x/node', '/x/node_modules/@github/copilot/index.js'] },
};
const commandOf = (pid: number) => commands[pid];
const bridge = (parent: number, identity = 'copilot') => ({ identity, ancestry: [99, parent, 1] });
const hosts = new Set([10]);

describe('only a Copilot session is copilot', () => {
  it("a bridge its editor window's extension host started, or a Copilot process, is copilot", () => {
    assert.equal(editorAgentRefusal(bridge(10), hosts, commandOf), undefined);
    assert.equal(editorAgentRefusal(bridge(20), hosts, commandOf), undefined);
    assert.equal(editorAgentRefusal(bridge(50), hosts, commandOf), undefined);
  });

  it("one the Agent Host's Claude or Codex session started is not, and the refusal names its parent", () => {
    const claude = editorAgentRefusal(bridge(30), hosts, commandOf);
    assert.equal(claude?.code, 'not_your_channel');
    assert.match(claude!.message, /started by claude \(pid 30\)\. Nothing was recorded/);
    assert.match(editorAgentRefusal(bridge(40), hosts, commandOf)!.message, /started by codex \(pid 40\)/);
    // An extension host no editor window vouched for is a node process like any other.
    assert.match(editorAgentRefusal(bridge(10), new Set(), commandOf)!.message, /started by node bootstrap-fork/);
  });

  it('other names, and bridges whose process was not proven (no /proc), are not its business', () => {
    assert.equal(editorAgentRefusal(bridge(30, 'claude'), hosts, commandOf), undefined);
    assert.equal(editorAgentRefusal({ identity: 'copilot' }, hosts, commandOf), undefined);
  });

  it('tells a Copilot process by its executable or its package, not by a word in its arguments', () => {
    assert.ok(isCopilotProcess(commands[20]));
    assert.ok(!isCopilotProcess(commands[30]));
    assert.ok(!isCopilotProcess({ exe: 'bash', argv: ['bash', '-c', 'copilot'] }));
    assert.ok(!isCopilotProcess({ exe: 'node', argv: ['node', '/x/bridge.js', '--name', 'copilot'] }));
  });
});

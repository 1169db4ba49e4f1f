// Telling VS Code's own agent from Claude Code by a hook's payload alone: the one signal a VS Code
// started inside a Claude Code session (CLAUDECODE=1 inherited) cannot fake. The payloads are
// the documented common fields of each.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromVsCodeAgent } from '../../extension/hook/vsCodeAgent';

describe("a Claude-format hook's payload tells which agent ran it", () => {
  it("VS Code's camelCase payload is VS Code's agent", () => {
    const vscode = {
      timestamp: '2026-02-09T10:30:00.000Z',
      cwd: '/w',
      sessionId: 'vscode-chat-1',
      hookEventName: 'PostToolUse',
      transcript_path: '/t.json',
      tool_name: 'editFiles',
    };
    assert.equal(fromVsCodeAgent(vscode), true);
    assert.equal(fromVsCodeAgent({ hookEventName: 'Stop' }), true, 'without its session id too');
  });

  it("Claude Code's snake_case payload, or none at all, is left to the environment", () => {
    const claude = { session_id: 'S1', hook_event_name: 'PostToolUse', cwd: '/w', transcript_path: '/t.jsonl' };
    assert.equal(fromVsCodeAgent(claude), false);
    assert.equal(fromVsCodeAgent({ ...claude, hookEventName: 'PostToolUse' }), false, 'a session_id is Claude Code');
    assert.equal(fromVsCodeAgent({}), false, 'an empty or unreadable payload');
  });
});

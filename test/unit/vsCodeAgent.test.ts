// Telling VS Code's own agent from Claude Code by a hook's payload alone: the one signal a VS Code
// started inside a Claude Code session (CLAUDECODE=1 inherited) cannot fake. The payloads are
// the documented common fields of each, and one VS Code's agent (Copilot Chat 0.67) really sent
// (test/vscode/suite/vsCodeAgent.suite.ts drives it offline).
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

  it("the payload VS Code's agent really sends (snake_case, with a timestamp) is VS Code's agent", () => {
    const sent = {
      timestamp: '2026-12-03T11:52:27.459Z',
      hook_event_name: 'PostToolUse',
      session_id: '427b42c1-75d3-4ffb-80b8-94f6660afea1',
      transcript_path: '/u/User/workspaceStorage/-6bd2d9e4/GitHub.copilot-chat/transcripts/427b42c1.jsonl',
      tool_name: 'list_dir',
      tool_input: { path: '/w' },
      tool_response: '',
      tool_use_id: 'call_1__vscode-1796298741010',
      cwd: '/w',
    };
    assert.equal(fromVsCodeAgent(sent), true);
  });

  it("Claude Code's snake_case payload, or none at all, is left to the environment", () => {
    const claude = { session_id: 'S1', hook_event_name: 'PostToolUse', cwd: '/w', transcript_path: '/t.jsonl' };
    assert.equal(fromVsCodeAgent(claude), false);
    assert.equal(fromVsCodeAgent({ ...claude, hookEventName: 'PostToolUse' }), false, 'a session_id is Claude Code');
    assert.equal(fromVsCodeAgent({}), false, 'an empty or unreadable payload');
  });
});

// Whether a Claude-format hook was run by VS Code's own agent rather than by Claude Code. VS Code
// reads .claude/settings*.json hooks too, and a VS Code started from inside a Claude Code session
// inherits CLAUDECODE=1, so the environment alone cannot tell them apart; the payload can. VS
// Code's common fields are camelCase (sessionId, hookEventName), Claude Code's snake_case
// (session_id, hook_event_name).

export function fromVsCodeAgent(input: object): boolean {
  return !('session_id' in input) && ('sessionId' in input || 'hookEventName' in input);
}

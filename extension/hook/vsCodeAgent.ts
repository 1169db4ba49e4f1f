// Whether a Claude-format hook was run by VS Code's own agent rather than by Claude Code. VS Code
// reads .claude/settings*.json hooks too, and a VS Code started from inside a Claude Code session
// inherits CLAUDECODE=1, so the environment alone cannot tell them apart; the payload can. Copilot
// Chat (0.67, as run offline here) starts every hook's input with a `timestamp`, which Claude
// Code's never carries (its common fields: session_id, transcript_path, cwd, permission_mode, …);
// VS Code's documentation shows camelCase fields (sessionId, hookEventName), taken as VS Code too.

export function fromVsCodeAgent(input: object): boolean {
  const i = input as Record<string, unknown>;
  if (typeof i.timestamp === 'string') return true;
  return !('session_id' in i) && ('sessionId' in i || 'hookEventName' in i);
}

// How an agent launches the bridge (handoff-mcp): the same command for Copilot's MCP provider,
// Claude Code and Codex. The editor's own Node runs it, so the agent needs no Node of its own.
import { join } from 'node:path';

export interface BridgeLaunch {
  command: string;
  args: string[];
  /** ELECTRON_RUN_AS_NODE makes the desktop editor's binary behave as plain Node; Node ignores it. */
  env: Record<string, string>;
}

export function bridgeLaunch(extensionPath: string, name?: string): BridgeLaunch {
  const args = [join(extensionPath, 'dist', 'bridge.js')];
  if (name) args.push('--name', name);
  return { command: process.execPath, args, env: { ELECTRON_RUN_AS_NODE: '1' } };
}

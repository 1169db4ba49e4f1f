// One entry for `handoff connect|disconnect <cli>` and the editor's Connect commands.
import { connectClaude, disconnectClaude } from './claude';
import { connectCodex, disconnectCodex } from './codex';
import { applyChanges, type FileChange } from './files';
import { connectGemini, disconnectGemini } from './gemini';
import type { ConnectOptions } from './types';
import { connectVsCode, disconnectVsCode } from './vscode';

/** `vscode`: VS Code's own agent (hooks only; its MCP server is the editor's). */
export const AGENT_CLIS = ['claude', 'codex', 'gemini', 'vscode'] as const;
export type AgentCli = (typeof AGENT_CLIS)[number];
export type { ConnectOptions, FileChange };
export type { Launch } from './launch';

const CONNECT: Record<AgentCli, (o: ConnectOptions) => FileChange[]> = {
  claude: connectClaude,
  codex: connectCodex,
  gemini: connectGemini,
  vscode: connectVsCode,
};
const DISCONNECT: Record<AgentCli, (o: ConnectOptions) => FileChange[]> = {
  claude: disconnectClaude,
  codex: disconnectCodex,
  gemini: disconnectGemini,
  vscode: disconnectVsCode,
};

/** Registers the bridge and installs the hooks; returns what was written where (nothing when already so). */
export function connectAgent(cli: AgentCli, o: ConnectOptions): FileChange[] {
  return applyChanges(CONNECT[cli](o));
}

/** Removes exactly what connect added. */
export function disconnectAgent(cli: AgentCli, o: ConnectOptions): FileChange[] {
  return applyChanges(DISCONNECT[cli](o));
}

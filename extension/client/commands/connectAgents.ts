// "Handoff: Connect Claude Code / Codex / Gemini CLI": the same code as `handoff connect` — register
// the bridge and install the hooks in that CLI's own config — and say exactly what was written where.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { isIdentityName } from '../../hub/bus/identity';
import { connectAgent, type AgentCli } from '../../shared/connect';
import { launcherDir, refreshLaunchers } from '../../shared/connect/launchers';
import type { HubLocation } from '../location';

const LABEL: Record<AgentCli, string> = {
  claude: 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  vscode: "VS Code's agent",
};

export interface ConnectAgentArgs {
  /** The agent's identity on the bus; asked for when absent. */
  name?: string;
}

export async function connectAgentCommand(
  cli: AgentCli,
  extensionPath: string,
  location: HubLocation,
  log: vscode.LogOutputChannel,
  args?: ConnectAgentArgs,
): Promise<boolean> {
  const name =
    args?.name ??
    (await vscode.window.showInputBox({
      title: `Connect ${LABEL[cli]}`,
      prompt: 'The name this agent has on the bus (others send handoffs to it)',
      value: cli,
      validateInput: (v) =>
        isIdentityName(v) ? undefined : "Letters, digits, '.', '_' or '-', starting with a letter or digit.",
    }));
  if (!name) return false;
  try {
    // The editor's own Node runs the bridge and the hooks, through launchers that survive updates.
    const launch = refreshLaunchers(
      launcherDir(),
      process.execPath,
      join(extensionPath, 'dist'),
      !!process.versions.electron,
    );
    const changes = connectAgent(cli, { workspace: location.workspace, name, launch });
    for (const c of changes) log.info(`connect ${cli}: ${c.path}: ${c.what}`);
    const where = changes.length ? changes.map((c) => c.path).join(', ') : 'nothing to change';
    void vscode.window.showInformationMessage(
      `${LABEL[cli]} is connected as "${name}" (${where}). Restart running ${LABEL[cli]} sessions to pick it up.`,
    );
    return true;
  } catch (e) {
    log.error(`connect ${cli} failed: ${(e as Error).message}`);
    void vscode.window.showErrorMessage(`${LABEL[cli]} was NOT connected: ${(e as Error).message}`);
    return false;
  }
}

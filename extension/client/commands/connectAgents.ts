// "Handoff: Connect Claude Code / Codex / Gemini CLI": the same code as `handoff connect` — register
// the bridge and install the hooks in that CLI's own config — and say exactly what was written where.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { isIdentityName } from '../../hub/bus/identity';
import { agentNameAt } from '../../shared/agentNames';
import { connectAgent, type AgentCli } from '../../shared/connect';
import { launcherDir, refreshLaunchers } from '../../shared/connect/launchers';
import { agentLabel, connectedText } from '../../shared/connect/text';
import type { HubLocation } from '../location';

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
      title: `Connect ${agentLabel(cli)}`,
      prompt: `The name this agent has on the bus in ${location.folder} (others send handoffs to it)`,
      value: agentNameAt(cli, location.folder)?.name ?? cli,
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
    // The box shows the name the agent has here: a different one is a deliberate rename.
    const done = await connectAgent(cli, {
      workspace: location.workspace,
      folder: location.folder,
      name,
      rename: true,
      launch,
    });
    for (const c of done.changes) log.info(`connect ${cli}: ${c.path}: ${c.what}`);
    const text = connectedText(cli, done);
    log.info(`connect ${cli}: ${text}`);
    void vscode.window.showInformationMessage(text);
    return true;
  } catch (e) {
    log.error(`connect ${cli} failed: ${(e as Error).message}`);
    void vscode.window.showErrorMessage(`${agentLabel(cli)} was NOT connected: ${(e as Error).message}`);
    return false;
  }
}

const PICKABLE = ['claude', 'codex', 'gemini'] as const;

/** The view's empty state: which agent CLI to connect, then its own Connect command (which asks its name). */
export async function pickAgentToConnect(): Promise<void> {
  const pick = await vscode.window.showQuickPick(
    PICKABLE.map((cli) => ({ label: agentLabel(cli), cli })),
    { title: 'Connect an Agent', placeHolder: 'Which agent CLI should join the bus in this repository?' },
  );
  if (!pick) return;
  const command = { claude: 'handoff.connectClaude', codex: 'handoff.connectCodex', gemini: 'handoff.connectGemini' };
  await vscode.commands.executeCommand(command[pick.cli]);
}

// "Handoff: Disconnect Claude Code / Codex / Gemini CLI": the same code as `handoff disconnect` —
// remove exactly what connect added for the window's folder — and say what was removed where.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { disconnectAgent, type AgentCli } from '../../shared/connect';
import { launcherDir } from '../../shared/connect/launchers';
import { agentLabel } from '../../shared/connect/text';
import type { HubLocation } from '../location';

export function disconnectAgentCommand(cli: AgentCli, location: HubLocation, log: vscode.LogOutputChannel): boolean {
  try {
    // Disconnect finds our entries by their mark, not by the launcher they name.
    const dir = launcherDir();
    const launch = { node: join(dir, 'bin', 'node'), dist: join(dir, 'dist') };
    const changes = disconnectAgent(cli, { workspace: location.workspace, folder: location.folder, launch });
    for (const c of changes) log.info(`disconnect ${cli}: ${c.path}: ${c.what}`);
    const text =
      changes.length === 0
        ? `${agentLabel(cli)} was not connected for ${location.workspace}: nothing to change.`
        : `${agentLabel(cli)} is disconnected from ${location.workspace}: ${changes.map((c) => c.path).join(', ')} changed (the log says what). Restart a running session to drop it.`;
    log.info(`disconnect ${cli}: ${text}`);
    void vscode.window.showInformationMessage(text);
    return true;
  } catch (e) {
    log.error(`disconnect ${cli} failed: ${(e as Error).message}`);
    void vscode.window.showErrorMessage(`${agentLabel(cli)} was NOT disconnected: ${(e as Error).message}`);
    return false;
  }
}

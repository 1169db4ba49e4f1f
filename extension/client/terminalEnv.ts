// Integrated terminals get HANDOFF_HUB, so an agent started in one (claude, codex, gemini) finds
// this window's hub. The value is derived from the folder, so it survives reloads unchanged.
import * as vscode from 'vscode';

export function injectHubEnv(context: vscode.ExtensionContext, socket: string): void {
  const env = context.environmentVariableCollection;
  env.persistent = true;
  env.description = 'Handoff: HANDOFF_HUB points agents started here at this window’s hub.';
  env.replace('HANDOFF_HUB', socket);
}

// Integrated terminals get HANDOFF_HUB, so an agent started in one (claude, codex, gemini) finds
// this window's hub, and our `handoff` command first on PATH, so `handoff connect …` there is ours
// and never a registry package of that name. Both are derived from stable folders, so they survive
// reloads unchanged.
import { delimiter } from 'node:path';
import * as vscode from 'vscode';

/** `commands`: the launcher folder to put first on PATH; undefined when it was refused as not ours. */
export function injectTerminalEnv(context: vscode.ExtensionContext, socket: string, commands?: string): void {
  const env = context.environmentVariableCollection;
  env.persistent = true;
  env.description = 'Handoff: HANDOFF_HUB points agents started here at this window’s hub; `handoff` is on PATH.';
  env.replace('HANDOFF_HUB', socket);
  if (commands) env.prepend('PATH', commands + delimiter);
  else env.delete('PATH');
}

// Tells the hub who sits at this window and whether it has focus: at start, whenever the hub
// (re)starts, on every focus change and when the identity settings change. The hub counts the
// person live while a window of theirs was focused within the last five minutes.
import * as vscode from 'vscode';
import type { HubSupervisor } from '../hubSupervisor';
import { escalateTo, humanIdentity, humanRoles, wakeIdleAgents } from '../settings';

export function reportPresence(hub: HubSupervisor, log: vscode.LogOutputChannel): vscode.Disposable {
  let last = '';
  /** Only what changed goes to the hub (the window state also fires for `active`), unless `force`d by a fresh hub. */
  const report = (force = false) => {
    if (hub.state.kind !== 'running') return;
    const params = {
      identity: humanIdentity(),
      roles: humanRoles(),
      focused: vscode.window.state.focused,
      escalateTo: escalateTo(),
      wakeIdleAgents: wakeIdleAgents(),
      // VS Code's own agent's MCP server is this process's child: the hub lets only such a bridge be copilot.
      extensionHost: process.pid,
    };
    const sig = JSON.stringify(params);
    if (sig === last && !force) return;
    last = sig;
    hub
      .presence(params)
      .catch((e) => log.warn(`could not tell the hub who is at this window: ${(e as Error).message}`));
  };
  report(true);
  return vscode.Disposable.from(
    hub.onDidChangeState((s) => {
      if (s.kind === 'running') report(true);
    }),
    vscode.window.onDidChangeWindowState(() => report()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('handoff')) report();
    }),
  );
}

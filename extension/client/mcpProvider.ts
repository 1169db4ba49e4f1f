// Gives Copilot agent mode the bridge as an MCP server, launched with the editor's own Node and
// pointed at this window's hub. VS Code offers the definition to every agent it runs, its Agent
// Host's Claude and Codex sessions too, and its API does not say which asks: the hub lets only a
// bridge that this window's extension host or a Copilot session started be copilot (hub/presence/agentTree.ts).
import * as vscode from 'vscode';
import { VSCODE_AGENT_NAME } from '../shared/connect/vscode';
import { bridgeLaunch } from './bridgeLaunch';
import type { HubLocation } from './location';

export const MCP_PROVIDER_ID = 'handoff.bridge';

export function copilotServer(
  extensionPath: string,
  location: HubLocation,
  version: string,
): vscode.McpStdioServerDefinition {
  const launch = bridgeLaunch(extensionPath, VSCODE_AGENT_NAME);
  const def = new vscode.McpStdioServerDefinition(
    'Handoff',
    launch.command,
    launch.args,
    {
      ...launch.env,
      HANDOFF_HUB: location.socket,
      HANDOFF_CLIENT: 'copilot',
    },
    version,
  );
  def.cwd = vscode.Uri.file(location.workspace);
  return def;
}

export function registerMcpProvider(extensionPath: string, location: HubLocation, version: string): vscode.Disposable {
  return vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
    provideMcpServerDefinitions: () => [copilotServer(extensionPath, location, version)],
  });
}

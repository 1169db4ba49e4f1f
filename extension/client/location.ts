// Where this window's hub lives: the workspace it serves, its store and its socket. The socket is
// derived from the folder (shared/paths.ts), so HANDOFF_HUB stays the same across reloads and an
// agent started outside the editor finds the same hub.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { defaultStoreDir, hubSocketPath } from '../shared/paths';

export interface HubLocation {
  workspace: string;
  store: string;
  socket: string;
}

export function hubLocation(context: vscode.ExtensionContext): HubLocation {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  // Without a folder there is still one hub per window kind: a private folder in global storage.
  const workspace = folder?.uri.fsPath ?? join(context.globalStorageUri.fsPath, 'no-folder');
  // The store belongs to the folder, not to the editor: a headless `handoff hub` on the same folder
  // (which may take over when the window closes, or run before it opens) sees the same history.
  const store = folder ? defaultStoreDir(workspace) : join(workspace, 'store');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(store, { recursive: true });
  return { workspace, store, socket: hubSocketPath(workspace) };
}

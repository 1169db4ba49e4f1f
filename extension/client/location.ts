// Where this window's hub lives: the workspace it serves, its store and its socket. The socket is
// derived from the workspace (shared/paths.ts), so HANDOFF_HUB stays the same across reloads and an
// agent started outside the editor finds the same hub. A window on any worktree or subfolder of a
// repository serves the repository: windows on two worktrees share one hub.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { defaultStoreDir, hubSocketPath, workspaceOf } from '../shared/paths';

export interface HubLocation {
  /** The repository's main checkout in git, else the window's folder. */
  workspace: string;
  /** The window's folder (a worktree, a subfolder, or the workspace itself). */
  folder: string;
  store: string;
  socket: string;
}

export function hubLocation(context: vscode.ExtensionContext): HubLocation {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  // Without a folder there is still one hub per window kind: a private folder in global storage.
  const opened = folder?.uri.fsPath ?? join(context.globalStorageUri.fsPath, 'no-folder');
  const workspace = folder ? workspaceOf(opened) : opened;
  // The store belongs to the folder, not to the editor: a headless `handoff hub` on the same folder
  // (which may take over when the window closes, or run before it opens) sees the same history.
  const store = folder ? defaultStoreDir(workspace) : join(workspace, 'store');
  mkdirSync(workspace, { recursive: true });
  // Not made here: a store that does not exist yet may be a folder's old store, moved in by the hub.
  if (!folder) mkdirSync(store, { recursive: true });
  return { workspace, folder: opened, store, socket: hubSocketPath(workspace) };
}

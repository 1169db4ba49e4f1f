// This window's side of the editor key (protocol/editorKey.ts): the window that starts a hub makes
// one and keeps it in SecretStorage under the hub's socket, where another window of the same
// user's VS Code finds it and presents it, so its person's receipts work from there too.
import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';
import { EDITOR_KEY_PATTERN } from '../protocol/editorKey';

export function newEditorKey(): string {
  return randomBytes(32).toString('hex');
}

/** One key per hub, and a hub is its socket: two folders' hubs never share a key. */
function secretName(socket: string): string {
  return `handoff.hub.editorKey:${socket}`;
}

type Secrets = Pick<vscode.SecretStorage, 'get' | 'store'> & Partial<Pick<vscode.SecretStorage, 'onDidChange'>>;

export class EditorKeys {
  constructor(private readonly secrets: Secrets) {}

  /** When a window keeps a key for `socket`: VS Code fires this in the other windows, which is what they need. */
  onDidStore(socket: string, listener: () => void): { dispose(): unknown } {
    return (
      this.secrets.onDidChange?.((e) => {
        if (e.key === secretName(socket)) listener();
      }) ?? { dispose: () => undefined }
    );
  }

  /** Called once the hub holding `key` serves `socket`: a hub that lost the race must not overwrite the winner's key. */
  remember(socket: string, key: string): Thenable<void> {
    return this.secrets.store(secretName(socket), key);
  }

  /** The key for the hub on `socket`, if a window stored one; anything unreadable is no key (the window is `cli`). */
  async recall(socket: string): Promise<string | undefined> {
    try {
      const key = await this.secrets.get(secretName(socket));
      return key && EDITOR_KEY_PATTERN.test(key) ? key : undefined;
    } catch {
      return undefined; // no keyring: this window is the CLI to a shared hub
    }
  }
}

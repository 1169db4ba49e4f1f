// Where the Matrix link's configuration lives: homeserver, room and allowed senders in settings
// (workspace scope: one bus room per folder), the access token in SecretStorage only — never in
// settings, the hub's arguments or env, or a log line.
import * as vscode from 'vscode';
import type { MatrixConnectParams } from '../../protocol/control';

export interface MatrixWindowSettings {
  homeserver: string;
  room: string;
  allowedSenders: string[];
  /** A room the hub creates is end-to-end encrypted. */
  encrypt: boolean;
}

const SECTION = 'handoff.matrix';
const DISCONNECTED = 'handoff.matrix.disconnected';

/** One token per homeserver, so switching homeservers never sends a token to the wrong one. */
function secretKey(homeserver: string): string {
  return `handoff.matrix.accessToken:${homeserver}`;
}

export function normalizeHomeserver(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

export class MatrixCredentials {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly state: vscode.Memento,
  ) {}

  settings(): MatrixWindowSettings {
    const c = vscode.workspace.getConfiguration(SECTION);
    return {
      homeserver: normalizeHomeserver(c.get<string>('homeserver', '')),
      room: c.get<string>('room', '').trim(),
      allowedSenders: c
        .get<string[]>('allowedSenders', [])
        .map((u) => u.trim())
        .filter(Boolean),
      encrypt: c.get<boolean>('encrypt', false),
    };
  }

  async save(s: MatrixWindowSettings, accessToken: string): Promise<void> {
    await this.secrets.store(secretKey(s.homeserver), accessToken);
    await this.state.update(DISCONNECTED, false);
    const c = vscode.workspace.getConfiguration(SECTION);
    const target = vscode.workspace.workspaceFolders?.length
      ? vscode.ConfigurationTarget.Workspace
      : vscode.ConfigurationTarget.Global;
    await c.update('homeserver', s.homeserver, target);
    await c.update('room', s.room, target);
    await c.update('allowedSenders', s.allowedSenders, target);
  }

  token(homeserver: string): Thenable<string | undefined> {
    return this.secrets.get(secretKey(homeserver));
  }

  forgetToken(homeserver: string): Thenable<void> {
    return this.secrets.delete(secretKey(homeserver));
  }

  /** "Disconnect Matrix" must survive a hub restart, so the next start does not reconnect. */
  setDisconnected(): Thenable<void> {
    return this.state.update(DISCONNECTED, true);
  }

  /** The saved link, if settings and token are both there and the person has not disconnected it. */
  async saved(): Promise<MatrixConnectParams | undefined> {
    if (this.state.get<boolean>(DISCONNECTED)) return undefined;
    const s = this.settings();
    if (!s.homeserver || !s.room) return undefined;
    const accessToken = await this.token(s.homeserver);
    return accessToken
      ? { homeserver: s.homeserver, room: s.room, allowedSenders: s.allowedSenders, encrypt: s.encrypt, accessToken }
      : undefined;
  }
}

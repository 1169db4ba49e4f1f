// "Handoff: Connect Matrix" and "Handoff: Disconnect Matrix". Connect asks for the homeserver, a
// login (username + password, m.login.password) or an access token, the room and the allowed
// senders; it links the hub and reports what the homeserver said — connected as whom in which
// room, or the refusal. Settings are saved, and the token goes to SecretStorage, only once the
// homeserver has not refused them. Arguments fill in the prompts (tests, other extensions).
import * as vscode from 'vscode';
import type { LinkStatus } from '../../protocol/views';
import type { HubSupervisor } from '../hubSupervisor';
import { MatrixCredentials, normalizeHomeserver, type MatrixWindowSettings } from '../matrix/credentials';
import { passwordLogin } from '../matrix/login';
import { linkHeadline } from '../matrix/linkText';

export interface ConnectMatrixArgs {
  homeserver?: string;
  accessToken?: string;
  user?: string;
  password?: string;
  room?: string;
  allowedSenders?: string[];
  /** How long to wait for the homeserver's verdict (default 20 s). */
  waitMs?: number;
}

export interface ConnectMatrixOutcome {
  state: LinkStatus['state'] | 'failed';
  userId?: string;
  room?: string;
  error?: string;
}

// The hub's own rules (hub/matrix/config.ts), checked here so a typo is caught at its prompt.
const HOMESERVER = /^https?:\/\/[^\s/]+/;
const ROOM = /^(![^\s]+|#[^:\s]+:\S+)$/; // room version 12 ids carry no server name
const USER_ID = /^@[^:\s]+:\S+$/;

function parseSenders(text: string): string[] {
  return text
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
}

const TITLE = 'Connect Matrix';

async function ask(
  step: number,
  prompt: string,
  value: string,
  validate: (v: string) => string | undefined,
  password = false,
): Promise<string | undefined> {
  return vscode.window.showInputBox({
    title: `${TITLE} (${step}/4)`,
    prompt,
    value,
    password,
    ignoreFocusOut: true,
    validateInput: validate,
  });
}

/** The access token: given, from a password login, or pasted. */
async function obtainToken(homeserver: string, args: ConnectMatrixArgs): Promise<string | undefined> {
  if (args.accessToken) return args.accessToken;
  let user = args.user;
  let password = args.password;
  if (!user || !password) {
    const how = await vscode.window.showQuickPick(
      [
        {
          label: '$(account) Sign in with username and password',
          id: 'login' as const,
          detail: `A new device login on ${homeserver}`,
        },
        {
          label: '$(key) Paste an access token',
          id: 'token' as const,
          detail: 'E.g. from Element: Settings → Help & About → Advanced → Access Token',
        },
      ],
      { title: `${TITLE} (2/4)`, placeHolder: 'How should the hub sign in?', ignoreFocusOut: true },
    );
    if (!how) return undefined;
    if (how.id === 'token') {
      return ask(
        2,
        `Access token for ${homeserver} (kept in the editor's secret storage)`,
        '',
        (v) => (v.trim() ? undefined : 'Paste the token, or press Escape'),
        true,
      );
    }
    user = await ask(2, `Matrix user on ${homeserver} (alice or @alice:example.org)`, user ?? '', (v) =>
      v.trim() ? undefined : 'Enter the user name',
    );
    if (!user) return undefined;
    password = await ask(2, `Password for ${user.trim()}`, '', (v) => (v ? undefined : 'Enter the password'), true);
    if (!password) return undefined;
  }
  const login = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Signing in to ${homeserver}…` },
    () => passwordLogin(homeserver, user!, password!),
  );
  return login.accessToken;
}

/** Polls the hub until the link is connected or refused, or the time is up; the last status counts. */
async function verdict(hub: HubSupervisor, first: LinkStatus, waitMs: number): Promise<LinkStatus> {
  let status = first;
  const end = Date.now() + waitMs;
  while ((status.state === 'connecting' || status.state === 'retrying') && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 250));
    status = (await hub.refreshSnapshot()).link ?? { ...status, state: 'stopped' };
  }
  return status;
}

export async function connectMatrix(
  hub: HubSupervisor,
  credentials: MatrixCredentials,
  log: vscode.LogOutputChannel,
  args: ConnectMatrixArgs = {},
): Promise<ConnectMatrixOutcome | undefined> {
  const saved = credentials.settings();
  const homeserverText =
    args.homeserver ??
    (await ask(1, 'Homeserver URL', saved.homeserver || 'https://', (v) =>
      HOMESERVER.test(v.trim()) ? undefined : 'An http(s) URL such as https://matrix.example.org',
    ));
  if (!homeserverText) return undefined;
  const homeserver = normalizeHomeserver(homeserverText);
  let accessToken: string | undefined;
  try {
    accessToken = (await obtainToken(homeserver, args))?.trim();
  } catch (e) {
    return fail(`Matrix NOT connected: ${(e as Error).message}`);
  }
  if (!accessToken) return undefined;
  const room = (
    args.room ??
    (await ask(
      3,
      'Bus room: a room id (!id:server) or an alias (#name:server; created invite-only if missing)',
      saved.room,
      (v) =>
        ROOM.test(v.trim()) ? undefined : 'A room id such as !abc:example.org or an alias such as #handoff:example.org',
    ))
  )?.trim();
  if (!room) return undefined;
  const sendersText =
    args.allowedSenders?.join(',') ??
    (await ask(
      4,
      'Allowed senders: Matrix user ids whose handoffs this hub accepts, comma separated (your own account always is)',
      saved.allowedSenders.join(', '),
      (v) => {
        const bad = parseSenders(v).filter((u) => !USER_ID.test(u));
        return bad.length ? `Not a Matrix user id: ${bad.join(', ')} (expected @name:server)` : undefined;
      },
    ));
  if (sendersText === undefined) return undefined;
  const settings: MatrixWindowSettings = {
    homeserver,
    room,
    allowedSenders: parseSenders(sendersText),
    encrypt: saved.encrypt,
  };

  let status: LinkStatus;
  try {
    status = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Connecting the hub to ${homeserver}…` },
      async () => verdict(hub, await hub.matrixConnect({ ...settings, accessToken }), args.waitMs ?? 20_000),
    );
  } catch (e) {
    return fail(`Matrix NOT connected: ${(e as Error).message}`);
  }
  const outcome = { state: status.state, userId: status.userId, room: status.room, error: status.error };
  if (status.state === 'refused' || status.state === 'stopped') {
    // A refused token or room does not get better by retrying every few seconds: stop, save nothing.
    await hub.matrixDisconnect().catch(() => undefined);
    await hub.refreshSnapshot().catch(() => undefined);
    log.warn(`matrix: ${linkHeadline(status)}; nothing saved`);
    void vscode.window.showErrorMessage(`Matrix NOT connected — ${linkHeadline(status)}. Nothing was saved.`);
    return outcome;
  }
  await credentials.save(settings, accessToken);
  log.info(`matrix: ${linkHeadline(status)}; settings saved, token in secret storage`);
  if (status.state === 'connected') {
    void vscode.window.showInformationMessage(`${linkHeadline(status)}.`);
  } else {
    void vscode.window.showWarningMessage(
      `${linkHeadline(status)}. Saved; the hub keeps trying and the status bar shows when it connects.`,
    );
  }
  return outcome;
}

function fail(message: string): ConnectMatrixOutcome {
  void vscode.window.showErrorMessage(message);
  return { state: 'failed', error: message };
}

export async function disconnectMatrix(
  hub: HubSupervisor,
  credentials: MatrixCredentials,
  args: { forgetToken?: boolean } = {},
): Promise<boolean> {
  const { homeserver } = credentials.settings();
  await credentials.setDisconnected();
  try {
    await hub.matrixDisconnect();
    await hub.refreshSnapshot();
  } catch (e) {
    void vscode.window.showErrorMessage(`Matrix link not stopped: ${(e as Error).message}`);
    return false;
  }
  if (!homeserver || !(await credentials.token(homeserver))) {
    void vscode.window.showInformationMessage(
      'Matrix disconnected. Handoffs to other nodes wait in the outbox until you connect again.',
    );
    return true;
  }
  const forget =
    args.forgetToken ??
    (await vscode.window.showInformationMessage(
      `Matrix disconnected. Handoffs to other nodes wait in the outbox until you connect again. Forget the access token for ${homeserver} too?`,
      'Forget Token',
      'Keep Token',
    )) === 'Forget Token';
  if (forget) {
    await credentials.forgetToken(homeserver);
    void vscode.window.showInformationMessage(`Forgot the Matrix access token for ${homeserver}.`);
  }
  return true;
}

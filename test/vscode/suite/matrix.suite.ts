// "Handoff: Connect Matrix" inside a real VS Code against a real Synapse (started by
// editor.test.ts, which passes it in HANDOFF_TEST_MATRIX): the command, driven with its prompts
// answered by arguments, links the hub; the panel model and the status bar say so; the token sits
// in SecretStorage and not in settings; a bad token or password is a clear refusal that saves nothing.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ConnectMatrixOutcome } from '../../../extension/client/commands/connectMatrix';
import type { HandoffApi } from '../../../extension/client/extension';
import { waitFor } from '../../helpers/agent';
import { skipOrFail } from '../../helpers/skip.mjs';

interface TestHomeserver {
  homeserver: string;
  serverName: string;
  user: string;
  password: string;
  userId: string;
}

describe('Connect Matrix in a real VS Code', () => {
  let api: HandoffApi;
  let hs: TestHomeserver;

  before(async function () {
    if (!process.env.HANDOFF_TEST_MATRIX) {
      skipOrFail(
        this,
        'the Connect Matrix extension-host tests need Synapse (HANDOFF_TEST_MATRIX unset: editor.test.ts found no Synapse; install it with .ci/setup-synapse.sh)',
      );
    }
    hs = JSON.parse(process.env.HANDOFF_TEST_MATRIX!) as TestHomeserver;
    api = await vscode.extensions.getExtension<HandoffApi>('handoff.handoff-bus')!.activate();
    await waitFor(() => api.hubState().kind === 'running', 20_000, 'hub running');
  });

  const room = () => `#suite-${Date.now().toString(36)}:${hs.serverName}`;
  const settingsFile = () => join(vscode.workspace.workspaceFolders![0].uri.fsPath, '.vscode', 'settings.json');

  it('a token the homeserver does not know is refused in words, and nothing is saved', async () => {
    const outcome = await vscode.commands.executeCommand<ConnectMatrixOutcome>('handoff.connectMatrix', {
      homeserver: hs.homeserver,
      accessToken: 'syt_bogus_token_for_the_suite',
      room: room(),
      allowedSenders: [],
    });
    assert.equal(outcome?.state, 'refused');
    assert.match(outcome!.error ?? '', /M_UNKNOWN_TOKEN/);
    assert.equal(await api.hasMatrixToken(hs.homeserver), false, 'a refused token is not kept');
    assert.equal(api.panelModel().matrix, undefined, 'the refused link is stopped, not left retrying');
  });

  it('a wrong password is refused by the homeserver, and the error does not repeat it', async () => {
    const outcome = await vscode.commands.executeCommand<ConnectMatrixOutcome>('handoff.connectMatrix', {
      homeserver: hs.homeserver,
      user: hs.user,
      password: 'not-the-password-42',
      room: room(),
      allowedSenders: [],
    });
    assert.equal(outcome?.state, 'failed');
    assert.match(outcome!.error ?? '', /Matrix NOT connected: .* refused the login \(M_FORBIDDEN/);
    assert.doesNotMatch(outcome!.error ?? '', /not-the-password-42/);
    assert.equal(await api.hasMatrixToken(hs.homeserver), false);
  });

  it('a password login connects; model and status bar say so; the token is in SecretStorage only', async () => {
    const outcome = await vscode.commands.executeCommand<ConnectMatrixOutcome>('handoff.connectMatrix', {
      homeserver: hs.homeserver,
      user: hs.user,
      password: hs.password,
      room: room(),
      allowedSenders: ['@someone:example.org'],
    });
    assert.equal(outcome?.state, 'connected', JSON.stringify(outcome));
    assert.equal(outcome!.userId, hs.userId);
    const m = api.panelModel().matrix;
    assert.equal(m?.state, 'connected');
    assert.equal(m?.userId, hs.userId);
    assert.equal(m?.homeserver, hs.homeserver);
    assert.match(api.statusBar().text, /\$\(cloud\)$/);
    assert.match(api.statusBar().tooltip, new RegExp(`Matrix connected as ${hs.userId.replace(/[.$]/g, '\\$&')} in !`));
    assert.equal(await api.hasMatrixToken(hs.homeserver), true, 'the token is in SecretStorage');
    const c = vscode.workspace.getConfiguration('handoff.matrix');
    assert.equal(c.get('homeserver'), hs.homeserver);
    assert.deepEqual(c.get('allowedSenders'), ['@someone:example.org']);
    assert.ok(existsSync(settingsFile()), 'settings written to the workspace');
    const settings = readFileSync(settingsFile(), 'utf8');
    assert.doesNotMatch(settings, /syt_|accessToken|password/i, 'no token or password in settings.json');
  });

  it('Disconnect Matrix stops the link and forgets the token', async () => {
    assert.equal(await vscode.commands.executeCommand('handoff.disconnectMatrix', { forgetToken: true }), true);
    assert.equal(api.panelModel().matrix, undefined);
    assert.doesNotMatch(api.statusBar().text, /cloud|Matrix/);
    assert.equal(await api.hasMatrixToken(hs.homeserver), false);
  });
});

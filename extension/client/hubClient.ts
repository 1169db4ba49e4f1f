// The languageclient half of the hub supervisor, in a bundle of its own (dist/hubClient.js):
// vscode-languageclient is most of the extension's code, and nothing needs it until the hub
// starts, which is after activation. hubSupervisor.ts loads this module when it starts the hub.
import type { ChildProcess } from 'node:child_process';
import type * as vscode from 'vscode';
import { CloseAction, ErrorAction, LanguageClient, State } from 'vscode-languageclient/node';

export { LanguageClient, State };

/** What to do when the hub's connection closes: restart it, or leave it stopped. */
export type OnClosed = () => Promise<'restart' | 'stop'>;

export function createHubClient(
  spawnHub: () => ChildProcess,
  log: vscode.LogOutputChannel,
  onClosed: OnClosed,
): LanguageClient {
  return new LanguageClient('handoff.hub', 'Handoff hub', () => Promise.resolve(spawnHub()), {
    documentSelector: [],
    outputChannel: log,
    // The supervisor logs the hub's stderr itself, once per line at its level: the client's own
    // copy would log every line a second time, as an error.
    stdioOptions: { stdout: () => undefined, stderr: () => undefined },
    // A hub that exits because another took the socket meanwhile is the supervisor's to explain
    // (it uses that hub): no "Server initialization failed" notification.
    initializationFailedHandler: () => false,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue, handled: true }),
      closed: async () => ({
        action: (await onClosed()) === 'restart' ? CloseAction.Restart : CloseAction.DoNotRestart,
        handled: true,
      }),
    },
  });
}

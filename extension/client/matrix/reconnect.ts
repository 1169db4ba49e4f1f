// Every start of this window's own hub (first start, crash restart, "Restart Hub") links it to
// Matrix again from the saved settings and SecretStorage token, through handoff/matrix/connect —
// the token never goes into the hub's command line or environment. A hub started outside the
// window (shared) keeps its own configuration.
import * as vscode from 'vscode';
import type { HubSupervisor } from '../hubSupervisor';
import type { MatrixCredentials } from './credentials';

export function reconnectOnStart(
  hub: HubSupervisor,
  credentials: MatrixCredentials,
  log: vscode.LogOutputChannel,
): vscode.Disposable {
  let linkedPid: number | undefined;
  return hub.onDidChangeState(async (state) => {
    if (state.kind !== 'running' || state.shared || state.pid === linkedPid) return;
    linkedPid = state.pid;
    const saved = await credentials.saved();
    if (!saved) return;
    log.info(
      `matrix: linking the hub (pid ${state.pid}) to ${saved.homeserver}, room ${saved.room}, with the saved token`,
    );
    try {
      const status = await hub.matrixConnect(saved);
      log.info(`matrix: link ${status.state}`);
    } catch (e) {
      log.error(`matrix: the saved link was not accepted: ${(e as Error).message}`);
    }
  });
}

// A hub this window did not start (a headless `handoff hub`, or another window on the same
// folder, or the previous hub of a reloaded window still shutting down): this window talks to it
// over its socket with the same control protocol instead of failing.
import { connectControl, type ControlClient } from '../shared/controlClient';
import type { RequestType0 } from 'vscode-jsonrpc';
import { ChangedNotification, SnapshotRequest, type ControlRequest } from '../protocol/control';
import type { Snapshot, SnapshotChange } from '../protocol/views';

export class RunningHub {
  private constructor(private readonly control: ControlClient) {}

  static async connect(socket: string): Promise<RunningHub> {
    return new RunningHub(await connectControl(socket, 'vscode'));
  }

  get pid(): number | undefined {
    return this.control.hub.pid;
  }

  request<P, R>(req: ControlRequest<P, R>, params: P): Promise<R> {
    return this.control.connection.sendRequest<R>(req.method, params);
  }

  request0<R>(type: RequestType0<R, void>): Promise<R> {
    return this.control.connection.sendRequest(type);
  }

  snapshot(): Promise<Snapshot> {
    return this.request0(SnapshotRequest.type);
  }

  onChanged(listener: (c: SnapshotChange) => void): void {
    this.control.connection.onNotification(ChangedNotification.type, listener);
  }

  onClose(listener: () => void): void {
    this.control.connection.onClose(listener);
  }

  close(): void {
    this.control.close();
  }
}

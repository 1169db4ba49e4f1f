// A hub this window did not start (a headless `handoff hub`, or another window on the same
// folder, or the previous hub of a reloaded window still shutting down): this window talks to it
// over its socket with the same control protocol instead of failing.
import { connectControl, type ControlClient } from '../shared/controlClient';
import { ChangedNotification, SnapshotRequest, type Snapshot } from '../shared/protocol';

export class SharedHub {
  private constructor(private readonly control: ControlClient) {}

  static async connect(socket: string): Promise<SharedHub> {
    return new SharedHub(await connectControl(socket, 'vscode'));
  }

  get pid(): number | undefined {
    return this.control.hub.pid;
  }

  request<R>(method: string, params?: unknown): Promise<R> {
    return this.control.connection.sendRequest<R>(method, params);
  }

  snapshot(): Promise<Snapshot> {
    return this.request<Snapshot>(SnapshotRequest.method);
  }

  onChanged(listener: (s: Snapshot) => void): void {
    this.control.connection.onNotification(ChangedNotification.method, listener);
  }

  onClose(listener: () => void): void {
    this.control.connection.onClose(listener);
  }

  close(): void {
    this.control.close();
  }
}

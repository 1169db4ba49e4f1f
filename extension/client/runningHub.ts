// A hub this window did not start (a headless `handoff hub`, or another window on the same
// folder, or the previous hub of a reloaded window still shutting down): this window talks to it
// over its socket with the same control protocol instead of failing.
import { connectControl, type ControlClient } from '../shared/controlClient';
import {
  call,
  ChangedNotification,
  onNotice,
  SnapshotRequest,
  TerminalWakeRequest,
  WakeAskRequest,
  type RequestSender,
} from '../protocol/control';
import type { Snapshot, SnapshotChange } from '../protocol/views';
import type { TerminalWakeAnswer, WakeAskAnswer } from '../protocol/wake';

/** This window's answers to the hub's wake requests. */
export interface Waker {
  wake(params: unknown): Promise<TerminalWakeAnswer>;
  ask(params: unknown): Promise<WakeAskAnswer>;
}

export class RunningHub {
  private constructor(private readonly control: ControlClient) {}

  /** With the hub's editor key (client/editorKey.ts) this window is `editor` to it, else `cli`. */
  static async connect(socket: string, editorKey?: string): Promise<RunningHub> {
    return new RunningHub(await connectControl(socket, 'vscode', editorKey));
  }

  get pid(): number | undefined {
    return this.control.hub.pid;
  }

  /** Started as `handoff hub`, outside any editor window. */
  get headless(): boolean {
    return this.control.hub.headless === true;
  }

  /** Whether the hub took this window as an editor window (its person's receipts work here). */
  get isEditor(): boolean {
    return this.control.hub.channel === 'editor';
  }

  get connection(): RequestSender {
    return this.control.connection;
  }

  snapshot(): Promise<Snapshot> {
    return call(this.control.connection, SnapshotRequest);
  }

  onChanged(listener: (c: SnapshotChange) => void): void {
    onNotice(this.control.connection, ChangedNotification, listener);
  }

  /** The hub asks this window to wake an agent in one of its terminals, or its person whether to. */
  onWake(waker: Waker): void {
    this.control.connection.onRequest(TerminalWakeRequest.method, (p: unknown) => waker.wake(p));
    this.control.connection.onRequest(WakeAskRequest.method, (p: unknown) => waker.ask(p));
  }

  onClose(listener: () => void): void {
    this.control.connection.onClose(listener);
  }

  close(): void {
    this.control.close();
  }
}

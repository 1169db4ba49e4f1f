// Starts this window's hub (dist/hub.js) through vscode-languageclient and keeps it running:
// restart on crash (bounded), typed control requests, and the snapshot stream. The hub exits
// when this extension host dies (languageserver watches its stdin and our pid), so it — and every
// agent session registered in it — cannot outlive the window. When another hub already serves
// the folder, the window uses that one over its socket, and starts its own once it is gone.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import {
  ChangedNotification,
  ChaseRequest,
  LinksRequest,
  MatrixConnectRequest,
  MatrixDisconnectRequest,
  MessageRequest,
  PresenceRequest,
  ReceiptRequest,
  ResolveRequest,
  SearchRequest,
  SendRequest,
  SnapshotRequest,
  TerminalWakeRequest,
  WakeAskRequest,
  call,
  onNotice,
  type ActionParams,
  type ControlRequest,
  type MatrixConnectParams,
  type Params,
  type PresenceParams,
  type ReceiptParams,
  type RequestSender,
  type SendParams,
} from '../protocol/control';
import type {
  MessageView,
  ReceiptAnswer,
  LinkStatus,
  SearchHit,
  SearchQuery,
  SendResult,
  Snapshot,
  SnapshotChange,
} from '../protocol/views';
import type { LinksView } from '../protocol/link';

import { LiveSnapshot } from './liveSnapshot';
import { connectControl } from '../shared/controlClient';
import type { LanguageClient } from './hubClient';
import type { HubLocation } from './location';
import { RunningHub, type Waker } from './runningHub';
import { newEditorKey, type EditorKeys } from './editorKey';
import { hubLaunch } from './hubLaunch';
import { parseHubLine } from '../protocol/hubLog';
import { sharedHubLine } from './sharedHubText';

export type HubState =
  | { kind: 'starting' }
  /** `person: false`: this window may not write its person's receipts (ACK, read, result) on this hub. */
  | { kind: 'running'; pid?: number; shared?: boolean; person?: boolean; headless?: boolean }
  | { kind: 'down'; reason: string; restarting: boolean };

/** The hub's exit code when another hub already serves this folder (see hub/start/run.ts). */
const EXIT_ALREADY_RUNNING = 3;
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 3 * 60_000;

export class HubSupervisor implements vscode.Disposable {
  private client?: LanguageClient;
  private current: HubState = { kind: 'starting' };
  private readonly live = new LiveSnapshot();
  private lastStderr = '';
  private lastExit?: { code: number | null; signal: NodeJS.Signals | null };
  private exited: Promise<void> = Promise.resolve();
  private child?: ChildProcess;
  private readonly restarts: number[] = [];
  private shared?: RunningHub;
  /** The editor key of the hub this window spawned last, and of the shared hub (if a window stored one). */
  private ownKey = '';
  private sharedKey?: string;
  private readonly keyWatch: { dispose(): unknown };
  /** Answers the hub's requests to wake an agent in one of this window's terminals, and its questions to the person. */
  private waker: Waker = {
    wake: () => Promise.resolve({ woken: false, found: false, why: 'this window does not wake agents' }),
    ask: () => Promise.resolve({ wake: false }),
  };
  private readonly stateEmitter = new vscode.EventEmitter<HubState>();
  private readonly snapshotEmitter = new vscode.EventEmitter<Snapshot>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onDidChangeSnapshot = this.snapshotEmitter.event;

  constructor(
    private readonly location: HubLocation,
    private readonly extensionPath: string,
    private readonly log: vscode.LogOutputChannel,
    private readonly keys: EditorKeys,
  ) {
    this.keyWatch = keys.onDidStore(location.socket, () => void this.presentNewKey());
  }

  get state(): HubState {
    return this.current;
  }

  get snapshot(): Snapshot | undefined {
    return this.live.snapshot;
  }

  /** Whether the person's receipts (ACK, read, result) can be written from this window. */
  get personActs(): boolean {
    return this.current.kind === 'running' && this.current.person !== false;
  }

  get pid(): number | undefined {
    if (this.shared) return this.shared.pid;
    const c = this.child;
    return c && c.exitCode === null && c.signalCode === null ? c.pid : undefined;
  }

  async start(): Promise<void> {
    // A hub already on the socket (another window, a reopened tab's old one): use it rather than
    // spawn one that exits at once, which languageclient reports in three error notifications.
    if (existsSync(this.location.socket) && (await this.useShared(true))) return;
    // Loaded here, not at activation: see hubClient.ts (esbuild.mjs keeps this require external).
    const { createHubClient, State } = require('./hubClient') as typeof import('./hubClient');
    this.client = createHubClient(
      () => this.spawnHub(),
      this.log,
      () => this.onClosed(),
    );
    this.client.onDidChangeState((e) => {
      if (e.newState === State.Running) void this.onRunning();
      if (e.newState === State.Starting) this.setState({ kind: 'starting' });
    });
    onNotice(this.client, ChangedNotification, (c) => this.onChange(c));
    this.client.onRequest(TerminalWakeRequest.method, (p: unknown) => this.waker.wake(p));
    this.client.onRequest(WakeAskRequest.method, (p: unknown) => this.waker.ask(p));
    this.setState({ kind: 'starting' });
    try {
      await this.client.start();
    } catch (e) {
      if (!this.shared) this.setState({ kind: 'down', reason: this.explainExit(e), restarting: false });
    }
  }

  /** Who answers the hub when it asks this window to type a wake into one of its terminals (its own hub or a shared one). */
  answerWakes(waker: Waker): void {
    this.waker = waker;
  }

  /** "Handoff: Restart Hub": a fresh process, and a fresh crash budget. */
  async restart(): Promise<void> {
    this.restarts.length = 0;
    await this.stopOwn();
    this.shared?.close();
    this.shared = undefined;
    await this.start();
  }

  async dispose(): Promise<void> {
    this.keyWatch.dispose();
    const client = this.client;
    this.client = undefined;
    this.shared?.close();
    this.shared = undefined;
    this.stateEmitter.dispose();
    this.snapshotEmitter.dispose();
    await client?.dispose(2000).catch(() => undefined);
  }

  send(params: SendParams): Promise<SendResult> {
    return this.request(SendRequest, params);
  }

  chase(params: ActionParams): Promise<{ pushed: number }> {
    return this.request(ChaseRequest, params);
  }

  resolve(params: ActionParams): Promise<void> {
    return this.request(ResolveRequest, params);
  }

  /** A receipt written by this window's control session, as the person at it. */
  receipt(params: ReceiptParams): Promise<ReceiptAnswer> {
    return this.request(ReceiptRequest, params);
  }

  /** This window's key on the hub, from its last presence report: whether it is the window that notifies. */
  window?: string;

  async presence(params: PresenceParams): Promise<void> {
    this.window = (await this.request(PresenceRequest, params)).window;
  }

  message(id: string): Promise<MessageView | null> {
    return this.request(MessageRequest, { id });
  }

  /** A history search over everything (no `as`): what the person at the editor may see. */
  search(q: SearchQuery): Promise<SearchHit[]> {
    return this.request(SearchRequest, q);
  }

  /**
   * The params carry the access token, so they never travel on the languageclient connection,
   * whose verbose trace (`handoff.hub.trace.server`) would log them: a one-off control connection
   * on the hub's private socket carries them instead, untraced, with the hub's editor key (the
   * hub takes Matrix settings only from an editor window).
   */
  async matrixConnect(params: MatrixConnectParams): Promise<LinkStatus> {
    if (this.current.kind !== 'running') return this.request(MatrixConnectRequest, params); // says why not
    const key = this.shared ? this.sharedKey : this.ownKey;
    const control = await connectControl(this.location.socket, 'vscode-matrix-connect', key);
    try {
      return await call(control.connection, MatrixConnectRequest, params);
    } finally {
      control.close();
    }
  }

  /** Links this repository to another on this machine, unlinks one, or reads the links (hub/link/). */
  links(params: Params<'handoff/links'>): Promise<LinksView> {
    return this.request(LinksRequest, params);
  }

  matrixDisconnect(): Promise<void> {
    return this.request(MatrixDisconnectRequest);
  }

  /** Asks the hub for a fresh snapshot now, and publishes it like a pushed one. */
  async refreshSnapshot(): Promise<Snapshot> {
    const s = await this.request(SnapshotRequest);
    this.setSnapshot(s);
    return s;
  }

  private async request<P, R>(req: ControlRequest<P, R>, ...params: P extends void ? [] : [P]): Promise<R> {
    return call(this.connection(), req, ...params);
  }

  private connection(): RequestSender {
    const to = this.shared?.connection ?? this.client;
    if (this.current.kind !== 'running' || !to) {
      throw new Error(
        this.current.kind === 'down'
          ? `The Handoff hub is down: ${this.current.reason}`
          : 'The Handoff hub is still starting; try again in a moment.',
      );
    }
    return to;
  }

  private async stopOwn(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    if (old) await old.dispose().catch((e) => this.log.warn(`stopping the hub: ${(e as Error).message}`));
  }

  /** Uses the hub that holds the socket; false if it is gone by now (then ours can start). */
  private async useShared(probe = false): Promise<boolean> {
    let shared: RunningHub;
    const key = await this.keys.recall(this.location.socket);
    try {
      shared = await RunningHub.connect(this.location.socket, key);
    } catch (e) {
      if (!probe) this.log.info(`the other hub did not answer (${(e as Error).message}); starting ours again`);
      return false;
    }
    this.shared = shared;
    this.sharedKey = key;
    shared.onChanged((c) => this.onChange(c));
    shared.onWake(this.waker);
    shared.onClose(() => {
      if (this.shared !== shared) return;
      this.shared = undefined;
      this.log.warn(`the shared hub (pid ${shared.pid}) went away; starting this window's own hub`);
      void this.stopOwn().then(() => this.start());
    });
    this.log.info(`${this.location.workspace}: ${sharedHubLine(shared.pid, shared.isEditor, shared.headless)}`);
    this.setState({
      kind: 'running',
      pid: shared.pid,
      shared: true,
      person: shared.isEditor,
      headless: shared.headless,
    });
    try {
      this.setSnapshot(await shared.snapshot());
    } catch (e) {
      this.log.error(`snapshot from the shared hub failed: ${(e as Error).message}`);
    }
    return true;
  }

  /**
   * Another window kept a key for the shared hub after this one connected without it (two windows
   * racing to replace a hub that went away): connect again with it, as an editor window.
   */
  private async presentNewKey(): Promise<void> {
    const old = this.shared;
    if (!old || old.isEditor) return;
    const key = await this.keys.recall(this.location.socket);
    if (!key || key === this.sharedKey || this.shared !== old) return;
    this.shared = undefined; // so its close is not taken for the hub going away
    old.close();
    this.log.info(`a window of this VS Code kept the shared hub's editor key: connecting again with it`);
    if (!(await this.useShared())) await this.stopOwn().then(() => this.start());
  }

  private async onRunning(): Promise<void> {
    this.setState({ kind: 'running', pid: this.pid });
    this.log.info(`hub running (pid ${this.pid}) on ${this.location.socket}`);
    // Only now: a hub that exits because another serves the socket never got here, so it cannot
    // overwrite the serving hub's key.
    const key = this.ownKey;
    void Promise.resolve(this.keys.remember(this.location.socket, key)).catch((e) =>
      this.log.warn(
        `could not keep the hub's editor key in SecretStorage (${(e as Error).message}): another window on this folder will be the CLI to this hub`,
      ),
    );
    try {
      this.setSnapshot(await call(this.client!, SnapshotRequest));
    } catch (e) {
      this.log.error(`first snapshot failed: ${(e as Error).message}`);
    }
  }

  private setState(state: HubState): void {
    // Another hub now (own or shared): until its first snapshot the view must not show the last
    // hub's — a restarted hub's Matrix link was drawn "connected as …" while its own was signing in.
    const before = this.current;
    if (state.kind === 'running' && (before.kind !== 'running' || before.pid !== state.pid)) this.live.clear();
    this.current = state;
    this.stateEmitter.fire(state);
  }

  private setSnapshot(s: Snapshot): void {
    this.live.reset(s);
    this.snapshotEmitter.fire(this.live.snapshot!);
  }

  /** A change keyed by message id; a full snapshot only when the rows held cannot show what must be shown. */
  private onChange(c: SnapshotChange): void {
    if (this.live.apply(c)) this.snapshotEmitter.fire(this.live.snapshot!);
    else
      void this.refreshSnapshot().catch((e) =>
        this.log.error(`snapshot after a change failed: ${(e as Error).message}`),
      );
  }

  /** The hub's connection closed: use the hub that took the socket, restart ours (bounded), or give up and say why. */
  private async onClosed(): Promise<'restart' | 'stop'> {
    // The pipe can close a moment before the process reports its exit code.
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 1000))]);
    const why = this.explainExit();
    if (this.lastExit?.code === EXIT_ALREADY_RUNNING && (await this.useShared())) return 'stop';
    if (!this.allowRestart()) {
      const reason = `${why} It crashed ${MAX_RESTARTS + 1} times in 3 minutes, so it is not restarted; see the Handoff log, then run "Handoff: Restart Hub".`;
      this.setState({ kind: 'down', reason, restarting: false });
      return 'stop';
    }
    this.log.warn(`${why} Restarting it.`);
    this.setState({ kind: 'down', reason: why, restarting: true });
    return 'restart';
  }

  private allowRestart(): boolean {
    const now = Date.now();
    this.restarts.push(now);
    while (this.restarts.length && now - this.restarts[0] > RESTART_WINDOW_MS) this.restarts.shift();
    return this.restarts.length <= MAX_RESTARTS;
  }

  private spawnHub(): ChildProcess {
    // A fresh key per hub process: a stale one in SecretStorage opens nothing.
    this.ownKey = newEditorKey();
    const { args, env } = hubLaunch(this.location, this.extensionPath, this.ownKey, process.env);
    this.lastStderr = '';
    this.lastExit = undefined;
    // process.execPath is the editor's Node (or Electron, which ELECTRON_RUN_AS_NODE turns into Node).
    const child = spawn(process.execPath, args, {
      cwd: this.location.workspace,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.log.info(`starting hub: ${process.execPath} ${args.join(' ')}`);
    let partial = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line) continue;
        const { level, text } = parseHubLine(line);
        // Keep the last sentence, not the last line of a stack trace.
        if (!/^\s+at /.test(text)) this.lastStderr = text;
        this.log[level](`hub: ${text}`);
      }
    });
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        this.lastExit = { code, signal };
        this.log.info(`hub pid ${child.pid} exited (code ${code}, signal ${signal})`);
        resolve();
      }),
    );
    return child;
  }

  private explainExit(e?: unknown): string {
    const exit = this.lastExit;
    const how = exit
      ? exit.signal
        ? `was killed (${exit.signal})`
        : `exited with code ${exit.code}`
      : 'stopped answering';
    const detail = this.lastStderr ? ` Last words: ${this.lastStderr}` : e ? ` ${(e as Error).message}` : '';
    return `The hub ${how}.${detail}`;
  }
}

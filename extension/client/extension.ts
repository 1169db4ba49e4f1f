// The extension host side of Handoff: supervises this window's hub and puts the bus in front of
// the person — sidebar view, status bar, commands, terminal env, and Copilot's MCP server.
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { Snapshot } from '../protocol/views';
import { commandDir, launcherDir, refreshLaunchers } from '../shared/connect/launchers';
import { connectAgentCommand, pickAgentToConnect, type ConnectAgentArgs } from './commands/connectAgents';
import { disconnectAgentCommand } from './commands/disconnectAgents';
import { connectMatrix, disconnectMatrix, type ConnectMatrixArgs } from './commands/connectMatrix';
import { linkRepository, unlinkRepository } from './commands/linkRepository';
import { openInbox } from './commands/openInbox';
import { sendHandoff } from './commands/sendHandoff';
import { HubSupervisor, type HubState } from './hubSupervisor';
import { EditorKeys } from './editorKey';
import { hubLocation, type HubLocation } from './location';
import { MatrixCredentials } from './matrix/credentials';
import { reconnectOnStart } from './matrix/reconnect';
import { registerMcpProvider, copilotServer } from './mcpProvider';
import { MESSAGE_SCHEME, MessageDocuments, openMessage } from './messageDocument';
import { notifyOverdue } from './overdueNotice';
import { panelModel } from './panel/model';
import type { PanelModel } from '../protocol/panel';
import { PanelViewProvider } from './panel/viewProvider';
import { UnreadBadge } from './panel/unreadBadge';
import type { InboxAct } from '../protocol/panel';
import { InboxActions } from './person/actions';
import { notifyArrivals } from './person/arrivals';
import { Arrivals, personView, unreadBadge } from './person/inbox';
import { reportPresence } from './person/presence';
import { humanIdentity } from './settings';
import { StatusBar } from './statusBar';
import type { StatusView } from './statusView';
import { injectTerminalEnv } from './terminalEnv';
import { TerminalWake, type WakeRecord } from './terminalWake';
import { WakeAsk, type WakeQuestion } from './wakeAsk';

/** What the extension exports: for tests and for other extensions that want to watch the bus. */
export interface HandoffApi {
  location: HubLocation;
  hubState(): HubState;
  hubPid(): number | undefined;
  snapshot(): Snapshot | undefined;
  panelModel(): PanelModel;
  statusBar(): StatusView;
  /** The unread badge on the Handoff icon (undefined: none). */
  unreadBadge(): vscode.ViewBadge | undefined;
  onDidChange: vscode.Event<void>;
  copilotServer(): vscode.McpStdioServerDefinition;
  /** Whether SecretStorage holds a Matrix token for this homeserver (never the token itself). */
  hasMatrixToken(homeserver: string): Promise<boolean>;
  /** The last answers this window gave the hub's requests to wake an agent in one of its terminals. */
  terminalWakes(): readonly WakeRecord[];
  /** The last questions this window put to its person before a wake (handoff.wakeIdleAgents "ask"). */
  wakeQuestions(): readonly WakeQuestion[];
}

let hub: HubSupervisor | undefined;

export function activate(context: vscode.ExtensionContext): HandoffApi {
  const log = vscode.window.createOutputChannel('Handoff', { log: true });
  const location = hubLocation(context);
  const version = String(context.extension.packageJSON.version ?? '0');
  log.info(`workspace ${location.workspace}, store ${location.store}, socket ${location.socket}`);
  // Agent configs written by Connect, and the terminals' `handoff`, name these launchers: point
  // them at this editor and build. A folder refused as not ours is not put on the terminals' PATH.
  let launchers = true;
  try {
    refreshLaunchers(launcherDir(), process.execPath, join(context.extensionPath, 'dist'), !!process.versions.electron);
  } catch (e) {
    launchers = false;
    log.warn(`could not refresh the agent launchers in ${launcherDir()}: ${(e as Error).message}`);
  }
  injectTerminalEnv(context, location.socket, launchers ? commandDir(launcherDir()) : undefined);

  const supervisor = new HubSupervisor(location, context.extensionPath, log, new EditorKeys(context.secrets));
  hub = supervisor;
  const terminalWake = new TerminalWake(log);
  const wakeAsk = new WakeAsk(log);
  supervisor.answerWakes({ wake: (p) => terminalWake.wake(p), ask: (p) => wakeAsk.ask(p) });
  const changed = new vscode.EventEmitter<void>();
  const matrix = new MatrixCredentials(context.secrets, context.workspaceState);

  const chase = async (id: string) => {
    const r = await supervisor.chase({ id, by: humanIdentity() });
    void vscode.window.showInformationMessage(
      r.pushed > 0
        ? `Chased ${id}: pushed again to ${r.pushed} session(s), flagged as a chase.`
        : `Chase recorded for ${id}, but no recipient has a live session: it stays queued.`,
    );
  };
  const inbox = new InboxActions(supervisor);
  const panel = new PanelViewProvider(
    context.extensionUri,
    (filter) => panelModel(supervisor.state, supervisor.snapshot, filter, humanIdentity()),
    {
      open: (id) => openMessage((m) => supervisor.message(m), id),
      copyId: async (id) => {
        await vscode.env.clipboard.writeText(id);
        vscode.window.setStatusBarMessage(`Copied ${id}`, 3000);
      },
      chase,
      resolve: async (id) => {
        await supervisor.resolve({ id, by: humanIdentity() });
        vscode.window.setStatusBarMessage(`Handoff ${id} marked resolved`, 3000);
      },
      inbox: (act, id) => inbox.run(act, id),
      search: (q) => supervisor.search(q),
      connect: () => pickAgentToConnect(),
      unlink: async (root) => void (await unlinkRepository(supervisor, root, true)),
    },
    log,
  );

  const showPanel = async (filter: 'all' | 'overdue') => {
    panel.setFilter(filter);
    await vscode.commands.executeCommand(`${PanelViewProvider.viewId}.focus`);
  };
  const status = new StatusBar(
    () => supervisor.state,
    () => supervisor.snapshot,
    humanIdentity,
    (items) => notifyOverdue(items, () => showPanel('overdue'), chase),
  );
  // On the activity-bar icon from activation, not only once the view has been shown.
  const badge = new UnreadBadge();
  const arrivals = new Arrivals();
  const openInboxCommand = (args?: { id?: string; act?: InboxAct }) =>
    openInbox(() => supervisor.snapshot, inbox, args);
  const refresh = () => {
    const me = personView(supervisor.snapshot, humanIdentity());
    const fresh = arrivals.fresh(humanIdentity(), me?.inbox);
    // Every window of the person sees the arrival; only the one they used last says so (a window
    // that has not heard its key back yet notifies rather than risk nobody doing so).
    const notifies = !me?.notifier || !supervisor.window || me.notifier === supervisor.window;
    if (fresh.length && notifies)
      notifyArrivals(
        fresh,
        (act, id) => inbox.run(act, id),
        () => openInboxCommand(),
        supervisor.personActs,
      );
    else if (fresh.length)
      log.info(
        `${fresh.length} new handoff(s) for ${humanIdentity()}: window ${me?.notifier} notifies, not this one (${supervisor.window ?? 'no key yet'})`,
      );
    status.update();
    badge.set(supervisor.state.kind === 'running' ? unreadBadge(supervisor.snapshot, humanIdentity()) : undefined);
    panel.refresh();
    changed.fire();
  };

  context.subscriptions.push(
    log,
    changed,
    terminalWake,
    status,
    badge,
    panel,
    { dispose: () => void supervisor.dispose() },
    supervisor.onDidChangeState(refresh),
    supervisor.onDidChangeSnapshot(refresh),
    reconnectOnStart(supervisor, matrix, log),
    reportPresence(supervisor, log),
    vscode.window.registerWebviewViewProvider(PanelViewProvider.viewId, panel),
    vscode.workspace.registerTextDocumentContentProvider(
      MESSAGE_SCHEME,
      new MessageDocuments((id) => supervisor.message(id)),
    ),
    registerMcpProvider(context.extensionPath, location, version),
    vscode.commands.registerCommand('handoff.send', () => sendHandoff(supervisor, log)),
    vscode.commands.registerCommand('handoff.openInbox', openInboxCommand),
    vscode.commands.registerCommand('handoff.showOverdue', () => showPanel('overdue')),
    vscode.commands.registerCommand('handoff.restartHub', () => supervisor.restart()),
    vscode.commands.registerCommand('handoff.showLog', () => log.show()),
    // Typing "Get Started with Handoff" found VS Code's Accessibility walkthrough, not ours.
    vscode.commands.registerCommand('handoff.getStarted', () =>
      vscode.commands.executeCommand(
        'workbench.action.openWalkthrough',
        `${context.extension.id}#handoff.start`,
        false,
      ),
    ),
    vscode.commands.registerCommand('handoff.connectClaude', (args?: ConnectAgentArgs) =>
      connectAgentCommand('claude', context.extensionPath, location, log, args),
    ),
    vscode.commands.registerCommand('handoff.connectCodex', (args?: ConnectAgentArgs) =>
      connectAgentCommand('codex', context.extensionPath, location, log, args),
    ),
    vscode.commands.registerCommand('handoff.connectGemini', (args?: ConnectAgentArgs) =>
      connectAgentCommand('gemini', context.extensionPath, location, log, args),
    ),
    vscode.commands.registerCommand('handoff.disconnectClaude', () => disconnectAgentCommand('claude', location, log)),
    vscode.commands.registerCommand('handoff.disconnectCodex', () => disconnectAgentCommand('codex', location, log)),
    vscode.commands.registerCommand('handoff.disconnectGemini', () => disconnectAgentCommand('gemini', location, log)),
    vscode.commands.registerCommand('handoff.connectMatrix', (args?: ConnectMatrixArgs) =>
      connectMatrix(supervisor, matrix, log, args),
    ),
    vscode.commands.registerCommand('handoff.disconnectMatrix', (args?: { forgetToken?: boolean }) =>
      disconnectMatrix(supervisor, matrix, args),
    ),
    vscode.commands.registerCommand('handoff.linkRepository', (folder?: string) => linkRepository(supervisor, folder)),
    vscode.commands.registerCommand('handoff.unlinkRepository', (folder?: string) =>
      unlinkRepository(supervisor, folder),
    ),
  );

  // Off the activation path: the window is usable at once; the status bar says "starting" until
  // the hub runs, and start() reports its own failures there. Not even start()'s first
  // synchronous steps (loading the languageclient bundle, spawning the hub) run inside activate().
  setImmediate(() => void supervisor.start());
  return {
    location,
    hubState: () => supervisor.state,
    hubPid: () => supervisor.pid,
    snapshot: () => supervisor.snapshot,
    panelModel: () => panel.currentModel(),
    statusBar: () => status.current,
    unreadBadge: () => badge.current,
    onDidChange: changed.event,
    copilotServer: () => copilotServer(context.extensionPath, location, version),
    hasMatrixToken: async (homeserver) => !!(await matrix.token(homeserver)),
    terminalWakes: () => terminalWake.answers,
    wakeQuestions: () => wakeAsk.asked,
  };
}

/** Stops the hub with the window: it removes its socket on the way out. */
export async function deactivate(): Promise<void> {
  await hub?.dispose();
  hub = undefined;
}

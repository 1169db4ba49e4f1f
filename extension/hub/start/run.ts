// Runs a hub: store, socket, and — when the editor launched it through vscode-languageclient —
// the control protocol on that connection (the process then exits when its parent dies).
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { takeProcessLock, type ProcessLock } from '../../shared/processLock';
import { parseArgs } from 'node:util';
import { removeHubPointer, writeHubPointer } from '../../shared/discovery';
import { defaultStoreDir, hubSocketPath, workspaceOf } from '../../shared/paths';
import { adoptFolderStores, folderStoreCandidates } from './adoptFolderStores';
import { serveControl } from '../serve/control';
import { Hub } from '../hub';
import { HubAlreadyRunning, listen } from '../serve/listen';
import { loadMatrixConfig, MatrixConfigError } from '../matrix/config';
import { startMatrix } from '../matrix/load';
import { keepYoungGenerationSmall, shedLoadingMemory } from './shedMemory';
import { formatHubLine, type Log } from '../../protocol/hubLog';
import { takeEditorKey } from '../serve/editorKey';
import { powers, weakerGuarantees } from '../../shared/platform/powers';

export interface HubArgs {
  /** The repository (its main checkout) when in git, whichever checkout or subfolder was named. */
  workspace: string;
  /** The folder named with --workspace (a worktree, a subfolder), for finding its old store. */
  openedFrom: string;
  store?: string;
  socket?: string;
  node?: string;
  slaSeconds?: number;
  replayLimit?: number;
  /** JSON file with the Matrix settings (see matrix/config.ts); env vars work too. */
  matrixConfig?: string;
  relayWaitMs?: number;
  /** Launched by vscode-languageclient: serve the control protocol on stdio/IPC. */
  editor: boolean;
  /** Over node IPC (TransportKind.ipc) rather than stdio. */
  ipc?: boolean;
  /** The editor's extension host that started it (vscode-languageclient's --clientProcessId). */
  clientProcessId?: number;
}

export function parseHubArgs(argv: string[]): HubArgs {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      workspace: { type: 'string' },
      store: { type: 'string' },
      socket: { type: 'string' },
      node: { type: 'string' },
      'sla-seconds': { type: 'string' },
      'replay-limit': { type: 'string' },
      'matrix-config': { type: 'string' },
      'relay-wait-ms': { type: 'string' },
      'node-ipc': { type: 'boolean' },
      stdio: { type: 'boolean' },
      clientProcessId: { type: 'string' },
    },
  });
  const num = (v: unknown) => (typeof v === 'string' && v !== '' ? Number(v) : undefined);
  const openedFrom = resolve(String(values.workspace ?? process.cwd()));
  return {
    workspace: workspaceOf(openedFrom),
    openedFrom,
    store: values.store as string | undefined,
    socket: values.socket as string | undefined,
    node: values.node as string | undefined,
    slaSeconds: num(values['sla-seconds']),
    replayLimit: num(values['replay-limit']),
    matrixConfig: values['matrix-config'] as string | undefined,
    relayWaitMs: num(values['relay-wait-ms']),
    editor: !!values['node-ipc'] || !!values.stdio,
    ipc: !!values['node-ipc'],
    clientProcessId: num(values.clientProcessId),
  };
}

export async function runHub(args: HubArgs): Promise<void> {
  // In editor mode stdout may be the JSON-RPC channel: log to stderr only.
  const log: Log = (line, level = 'info') => process.stderr.write(formatHubLine(line, level, new Date()));
  const socketPath = args.socket ?? hubSocketPath(args.workspace);
  const storeDir = args.store ?? defaultStoreDir(args.workspace);
  const ownStore = storeDir === defaultStoreDir(args.workspace);
  const hub = new Hub({
    workspace: args.workspace,
    storeDir,
    socket: socketPath,
    node: args.node,
    replayLimit: args.replayLimit,
    limits: args.slaSeconds ? { defaultSlaMs: args.slaSeconds * 1000 } : undefined,
    tickMs: Number(process.env.HANDOFF_TICK_MS) || 1000,
    relayWaitMs: args.relayWaitMs,
    // Only an editor launch names its extension host; a pid on another command line vouches for nothing.
    editorHost: args.editor && Number.isInteger(args.clientProcessId) ? args.clientProcessId : undefined,
    log,
  });
  // Before anything is started that could inherit it (see serve/editorKey.ts).
  const editorKey = takeEditorKey(process.env, args.editor);
  if (editorKey.why)
    log(`${editorKey.why}: every socket control connection is cli, only this stdio is the editor`, 'warn');
  // Claim the socket before touching the store: a second hub for this workspace must stop here,
  // before it could write the running hub's files. Connections wait until the store is open.
  let server;
  try {
    server = await listen(hub, socketPath, {
      isEditorKey: editorKey.check,
      headless: !args.editor,
      heartbeatMs: Number(process.env.HANDOFF_HEARTBEAT_MS) || 15_000,
      handshakeMs: Number(process.env.HANDOFF_HANDSHAKE_MS) || 10_000,
      log,
    });
  } catch (e) {
    if (e instanceof HubAlreadyRunning) {
      log(e.message);
      process.exit(3);
    }
    throw e;
  }
  // One hub per store, whatever socket it listens on: two windows whose runtime folders differ
  // (another TMPDIR or XDG_RUNTIME_DIR) derive two sockets for one repository, and two hubs
  // writing one journal would lose acknowledged handoffs.
  let storeLock: ProcessLock;
  try {
    // Best effort: a store folder that cannot be made is refused by the store itself, with the
    // reason in every send's answer (G4); the lock is the kernel's and needs no folder.
    try {
      mkdirSync(dirname(storeDir), { recursive: true, mode: 0o700 });
    } catch {
      // the store's open says why
    }
    storeLock = await takeProcessLock(storeDir);
  } catch (e) {
    // Never serve without it: a second hub could then open the same journal.
    server.close();
    if (powers.socketFiles) rmSync(socketPath, { force: true });
    log(`cannot take the lock on the store ${storeDir} (${(e as Error).message}): not serving without it`, 'error');
    process.exit(3);
  }
  if (!storeLock.owned) {
    server.close();
    if (powers.socketFiles) rmSync(socketPath, { force: true });
    log(
      `A Handoff hub (pid ${storeLock.holder?.pid ?? '?'}) already serves the store ${storeDir}, on another socket than ${socketPath} (its runtime folder differs from this one's). Not opening the store twice: use that hub, or stop it first.`,
      'error',
    );
    process.exit(3);
  }
  process.on('exit', storeLock.release);
  // Before anything can be announced: a signal from here on must still remove the socket.
  const unlisten = () => {
    if (powers.socketFiles) rmSync(socketPath, { force: true });
    removeHubPointer(args.workspace);
  };
  let closing: Promise<void> | undefined;
  /** Stops taking connections and closes the store; the process stays until told to exit. */
  const close = (why: string): Promise<void> => {
    closing ??= (async () => {
      log(`stopping: ${why}`);
      server.close();
      unlisten();
      await hub.close().catch((e) => log(`close: ${(e as Error).message}`, 'error'));
    })();
    return closing;
  };
  const stop = (why: string) => void close(why).then(() => process.exit(0));
  // languageserver exits the process itself when the editor dies: the socket must not outlive it.
  process.on('exit', unlisten);
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  try {
    writeHubPointer(args.workspace, socketPath);
  } catch (e) {
    log(
      `no pointer to ${socketPath} under HOME (${(e as Error).message}): an agent whose CLI changes XDG_RUNTIME_DIR or TMPDIR may not find this hub`,
    );
  }

  // Only once the socket is ours (no other hub of this repository runs) and before the store opens.
  if (ownStore)
    await adoptFolderStores(args.workspace, storeDir, folderStoreCandidates(args.workspace, args.openedFrom), log);
  keepYoungGenerationSmall();
  await hub.start();
  const startedAt = performance.now();
  // The store's messages are read behind the start (a start from the open index parses none): the
  // garbage of reading them is there once the indexes are filled in.
  void hub.backfilled.then(() => {
    if (closing) return;
    shedLoadingMemory();
    log(
      `indexes filled in behind the start, every open message read (${Math.round(performance.now() - startedAt)} ms)`,
    );
  });
  try {
    const matrix = loadMatrixConfig(args.matrixConfig);
    if (matrix) startMatrix(hub, matrix, log);
  } catch (e) {
    if (!(e instanceof MatrixConfigError)) throw e;
    log(e.message);
    // Headless, a broken Matrix setup must stop the hub (a script would not notice); in the editor the local bus keeps working.
    if (!args.editor) process.exit(2);
  }
  log(`listening on ${socketPath} for ${args.workspace} (store ${storeDir}, node ${hub.node}, pid ${process.pid})`);
  // Once, at start: what this machine cannot do, so no one reads a weaker guarantee as Linux's.
  for (const weaker of weakerGuarantees(powers)) log(weaker, 'warn');

  if (args.editor) {
    // Imported here so the headless hub and the CLI do not load the language server library.
    const { createConnection, ProposedFeatures, IPCMessageReader, IPCMessageWriter } =
      await import('vscode-languageserver/node');
    // Streams passed explicitly: argv sniffing cannot be relied on once the library is bundled.
    const connection = args.ipc
      ? createConnection(ProposedFeatures.all, new IPCMessageReader(process), new IPCMessageWriter(process))
      : createConnection(ProposedFeatures.all, process.stdin, process.stdout);
    connection.onInitialize(() => ({ capabilities: {}, serverInfo: { name: 'handoff-hub', version: '0.1.0' } }));
    serveControl(hub, connection, 'editor');
    // LSP: answer `shutdown` once everything is closed; the library exits the process on `exit`.
    connection.onShutdown(() => close('shutdown requested by the editor'));
    connection.listen();
  }
}

// Starts the real hub binary (dist/hub.js) as a child process, the way `handoff hub` runs it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { hubSocketPath } from '../../extension/shared/paths';
import { tempDir } from './tempDir';

/** The repository root: tests are bundled into out/test/…, so walk up to package.json. */
function findRoot(dir: string): string {
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'esbuild.mjs'))) {
    const up = resolve(dir, '..');
    if (up === dir) throw new Error('cannot find the Handoff repository root');
    dir = up;
  }
  return dir;
}
export const ROOT = findRoot(__dirname);
export const DIST = join(ROOT, 'dist');
export const NODE = process.execPath;

export { tempDir };

export interface HubProcess {
  workspace: string;
  store: string;
  socket: string;
  proc: ChildProcess;
  log: () => string;
  kill9(): Promise<void>;
  stop(): Promise<void>;
  /** Starts a new hub process on the same workspace, store and socket. */
  restart(): Promise<HubProcess>;
  /** With `editor`: the hub's stdio as the editor window that runs it speaks it (LSP, initialized). */
  editor?: MessageConnection;
}

export interface HubSpec {
  workspace?: string;
  store?: string;
  /** null: no --socket, the hub derives it from the workspace like the bridge does. */
  socket?: string | null;
  env?: Record<string, string>;
  args?: string[];
  /** Run as the editor runs it: the control protocol on its stdio too (the person's channel). */
  editor?: boolean;
}

export function spawnHub(spec: HubSpec = {}): { proc: ChildProcess; ready: Promise<void>; output: () => string } {
  const workspace = spec.workspace!;
  const args = [
    join(DIST, 'hub.js'),
    '--workspace',
    workspace,
    '--store',
    spec.store!,
    ...(spec.socket ? ['--socket', spec.socket] : []),
    ...(spec.editor ? ['--stdio'] : []),
    ...(spec.args ?? []),
  ];
  const proc = spawn(NODE, args, {
    env: { ...process.env, ...spec.env },
    stdio: [spec.editor ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const ready = new Promise<void>((res, rej) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('listening on')) res();
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.on('exit', (code) => rej(new Error(`hub exited with ${code} before listening:\n${out}`)));
  });
  return { proc, ready, output: () => out };
}

/** kill -9 and SIGTERM for a running child process, each resolving once it has exited. */
export function stoppable(proc: ChildProcess): { kill9(): Promise<void>; stop(): Promise<void> } {
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    async kill9() {
      proc.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

export async function startHub(spec: HubSpec = {}): Promise<HubProcess> {
  const base = tempDir('hub');
  const full = {
    ...spec,
    workspace: spec.workspace ?? join(base, 'ws'),
    store: spec.store ?? join(base, 'store'),
    socket: spec.socket === undefined ? join(base, 'run', 'hub.sock') : spec.socket,
  };
  const { mkdirSync } = await import('node:fs');
  mkdirSync(full.workspace, { recursive: true });
  const { proc, ready, output } = spawnHub(full);
  let editor: MessageConnection | undefined;
  if (full.editor) {
    editor = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    editor.listen();
    await editor.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  }
  await ready;
  return {
    editor,
    workspace: full.workspace,
    store: full.store,
    socket: full.socket ?? hubSocketPath(full.workspace),
    proc,
    log: output,
    ...stoppable(proc),
    restart: () => startHub(full),
  };
}

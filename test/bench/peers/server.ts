// Where .ci/setup-peers.sh installed the peers, and how their servers are started and stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { stoppable } from '../../helpers/hubProcess';
import { waitUntil } from '../../helpers/wait';

const TOOLS = process.env.HANDOFF_TOOLS ?? join(homedir(), '.cache', 'handoff-tools');

/** The peer's install folder, or an error saying why it is not there (its setup's failure record). */
export function peerDir(folder: string, setup: string): string {
  const dir = join(TOOLS, 'peers', folder);
  if (existsSync(join(dir, '.handoff-ok'))) return dir;
  const failed = join(TOOLS, `${setup}.failed`);
  throw new Error(
    existsSync(failed)
      ? `install failed: ${readFileSync(failed, 'utf8').replace(/\n/g, '; ')}`
      : `not installed in ${dir}: run bash .ci/setup-peers.sh`,
  );
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

// Agent Mail's imports alone take ~6 s on this machine.
const START_TIMEOUT_MS = 60_000;

export interface ServerProcess {
  proc: ChildProcess;
  output: () => string;
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/** Spawns a server and resolves once `ready` holds (given its output so far), failing if it exits first. */
export async function spawnServer(
  command: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string>; ready: (out: string) => boolean | Promise<boolean> },
): Promise<ServerProcess> {
  const proc = spawn(command, args, {
    cwd: opts.cwd,
    env: { ...(process.env as Record<string, string>), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await waitUntil(
    async () => {
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new Error(`${command} ${args.join(' ')} exited before it was ready:\n${out.slice(-2000)}`);
      return opts.ready(out);
    },
    START_TIMEOUT_MS,
    () => `${command} ${args.join(' ')} to be ready:\n${out.slice(-2000)}`,
    100,
  ).catch((e: Error) => {
    proc.kill('SIGKILL');
    throw e;
  });
  return { proc, output: () => out, ...stoppable(proc) };
}

/** True once an HTTP GET of the url answers with a 2xx. */
export async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

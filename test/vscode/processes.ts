// Finding the hub process of a VS Code window from outside it, through /proc.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { waitUntil } from '../helpers/wait';

export interface HubProc {
  pid: number;
  socket: string;
}

/** Processes whose command line runs dist/hub.js for this workspace, with their --socket. */
export function hubProcesses(workspace: string): HubProc[] {
  const out: HubProc[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.endsWith('dist/hub.js')) && argv.includes(workspace)) {
        out.push({ pid: Number(d), socket: argv[argv.indexOf('--socket') + 1] });
      }
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/** The socket of the window's hub, once the hub has made it. */
export function hubSocket(workspace: string, timeoutMs = 20_000): Promise<string> {
  return waitUntil(
    () => {
      const hub = hubProcesses(workspace)[0];
      return hub && existsSync(hub.socket) && hub.socket;
    },
    timeoutMs,
    `a hub socket for ${workspace}`,
    100,
  );
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

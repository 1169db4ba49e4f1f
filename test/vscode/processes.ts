// Finding the hub process of a VS Code window from outside it, through /proc.
import { readdirSync, readFileSync } from 'node:fs';

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

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Processes a test started that outlive it on purpose: Codex 0.171 runs its app-server as a
// managed daemon (reparented to init, about 180 MB each) that stays after the TUI exits, and so
// does the Handoff bridge it started. Found by the test's own temp dir in their command line, since
// they are no longer anyone's descendants. Linux /proc; elsewhere nothing to do.
import { readdirSync, readFileSync } from 'node:fs';

/** SIGKILLs every process whose command line names a path under `dir`; returns how many. */
export function killStrays(dir) {
  if (!dir || dir.length < 8) return 0; // never a short prefix that could match anything
  let killed = 0;
  let pids;
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return 0;
  }
  for (const p of pids) {
    const pid = Number(p);
    if (pid === process.pid) continue;
    let cmdline;
    try {
      cmdline = readFileSync(`/proc/${p}/cmdline`, 'utf8');
    } catch {
      continue; // gone
    }
    if (!cmdline.includes(dir)) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      /* gone, or not ours */
    }
  }
  return killed;
}

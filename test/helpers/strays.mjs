// Processes a test started that outlive it: Codex 0.171 runs its app-server as a managed daemon
// (reparented to init, about 180 MB each) that stays after the TUI exits, and so does the Handoff
// bridge it started; a Claude Code in a closing tmux pane still writes its MCP logs under HOME.
// Found by the test's own temp folders in their command line or environment (HOME=…, CODEX_HOME=…),
// since they are no longer anyone's descendants. Linux /proc; elsewhere nothing to do.
import { readdirSync, readFileSync } from 'node:fs';

/** SIGKILLs every other process whose command line or environment names a path under one of `dirs`; returns how many. */
export function killStrays(...dirs) {
  // Never a short prefix that could match anything.
  const under = dirs.filter((d) => typeof d === 'string' && d.length >= 8);
  if (under.length === 0) return 0;
  let pids;
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return 0;
  }
  // The folder itself or a path under it, never another folder its name is a prefix of.
  const names = (text) =>
    under.some((d) => {
      for (let i = text.indexOf(d); i >= 0; i = text.indexOf(d, i + 1)) {
        const next = text[i + d.length];
        if (next === undefined || next === '/' || next === '\0' || next === ':' || next === ' ') return true;
      }
      return false;
    });
  let killed = 0;
  for (const p of pids) {
    const pid = Number(p);
    if (pid === process.pid || pid === process.ppid) continue;
    let found = false;
    for (const file of ['cmdline', 'environ']) {
      try {
        if (names(readFileSync(`/proc/${p}/${file}`, 'latin1'))) found = true;
      } catch {
        // gone, or not ours to read
      }
      if (found) break;
    }
    if (!found) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      /* gone, or not ours */
    }
  }
  return killed;
}

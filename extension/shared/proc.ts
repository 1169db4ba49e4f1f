// /proc/<pid>/stat on Linux, read the one safe way: the command name may hold spaces and
// parentheses, so fields are counted from after its last ')'. Undefined where there is no /proc.
import { readFileSync } from 'node:fs';

/** Fields 3 onward of /proc/<pid>/stat: [0] state, [1] ppid, [19] start time (clock ticks since boot). */
export function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

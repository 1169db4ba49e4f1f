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

/** The process's parents, nearest first, up to (not including) init; [] where there is no /proc. */
export function ancestry(pid: number, max = 32): number[] {
  const out: number[] = [];
  for (let p = Number(procStat(pid)?.[1]); out.length < max && p > 1; p = Number(procStat(p)?.[1])) out.push(p);
  return out;
}

// /proc/<pid>/stat on Linux, read the one safe way: the command name may hold spaces and
// parentheses, so fields are counted from after its last ')'. Undefined where there is no /proc
// (or the power is switched off: platform/powers.ts).
import { readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { powers } from './platform/powers';

/** Fields 3 onward of /proc/<pid>/stat: [0] state, [1] ppid, [19] start time (clock ticks since boot). */
export function procStat(pid: number): string[] | undefined {
  if (!powers.procfs) return undefined;
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

/** A process as seen once: its pid and start time, so that another process given the pid later is not taken for it. */
export interface ProcessMark {
  readonly pid: number;
  /** Clock ticks since boot (field 22 of /proc/<pid>/stat); undefined where there is no /proc. */
  readonly start?: string;
}

export function markProcess(pid: number): ProcessMark {
  return { pid, start: procStat(pid)?.[19] };
}

/** Whether the marked process still runs: not exited, not a zombie, its pid not reused. */
export function stillRuns(mark: ProcessMark): boolean {
  const stat = procStat(mark.pid);
  if (stat) return stat[19] === mark.start && stat[0] !== 'Z';
  if (powers.procfs) return false; // /proc, and no such process
  try {
    process.kill(mark.pid, 0); // no /proc (macOS): whether the pid exists is all there is to know
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a process runs, as /proc shows it: its executable's file name and its arguments. */
export interface ProcessCommand {
  /** The executable's file name (`claude`, `node`, `copilot-runtime`), from /proc/<pid>/exe. */
  readonly exe?: string;
  readonly argv: readonly string[];
}

/** Undefined where there is no /proc, or the process is gone. */
export function commandOf(pid: number): ProcessCommand | undefined {
  if (!powers.procfs) return undefined;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    let exe: string | undefined;
    try {
      exe = basename(readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''));
    } catch {
      exe = undefined; // another user's process, or a kernel thread: its arguments are all there is
    }
    return { exe, argv };
  } catch {
    return undefined;
  }
}

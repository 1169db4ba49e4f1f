// What this machine can do that some of Handoff's guarantees rest on (docs/platforms.md). With
// ipcPath.ts, the one place that asks which platform this is. HANDOFF_POWERS_OFF=procfs,tmux
// (and socketmodes) turns a Linux power off as if on a machine without it: the no-Linux-powers lane runs the suites
// so (.ci/lane-no-linux-powers.sh), since no macOS or Windows machine runs them.
import { existsSync } from 'node:fs';

export interface Powers {
  /** /proc: the hub proves which process a hook or bridge is, and reads its parents from the kernel. */
  readonly procfs: boolean;
  /** tmux, to type a wake into an idle Codex or Gemini pane (none on Windows outside WSL). */
  readonly tmux: boolean;
  /** A folder opens for fsync, so a create or rename is on disk when the sync returns (not on Windows). */
  readonly dirSync: boolean;
  /** The hub listens on a unix socket: a file, in a folder whose modes keep other users out (Windows: a named pipe). */
  readonly socketFiles: boolean;
  /**
   * File modes keep other users off the hub's socket (its 0700 folder). Not for a named pipe, whose
   * default DACL lets any user open it for reading: there the hub requires its secret in every hello.
   */
  readonly socketModes: boolean;
}

/** The powers HANDOFF_POWERS_OFF may turn off. */
export const SWITCHABLE = ['procfs', 'tmux', 'socketmodes'] as const;

export function powersOf(platform: NodeJS.Platform, off: string | undefined, hasProc: boolean): Powers {
  const switchedOff = new Set((off ?? '').split(',').map((s) => s.trim()));
  return {
    procfs: platform === 'linux' && hasProc && !switchedOff.has('procfs'),
    tmux: platform !== 'win32' && !switchedOff.has('tmux'),
    dirSync: platform !== 'win32',
    socketFiles: platform !== 'win32',
    socketModes: platform !== 'win32' && !switchedOff.has('socketmodes'),
  };
}

/** This process's powers. */
export const powers: Powers = powersOf(process.platform, process.env.HANDOFF_POWERS_OFF, existsSync('/proc/self/fd'));

/** What a hub with these powers promises less than Linux does, one line each, as its log and `handoff status` say it. */
export function weakerGuarantees(p: Powers): string[] {
  return [
    ...(p.procfs ? [] : ["process proof off (no /proc): a hook's or a bridge's identity is stated, not proven"]),
    ...(p.tmux
      ? []
      : [
          'tmux wake off (no tmux): an idle Codex or Gemini in a tmux pane is not woken, it sees its handoffs at its next turn',
        ]),
    ...(p.dirSync ? [] : ["folder sync off (Windows): a store file's create or rename is left to NTFS's own log"]),
  ];
}

// What `connect` writes for a CLI to run, by platform: POSIX `sh` launchers run by a POSIX shell,
// or on Windows `.cmd` launchers named in a command line for the shell each CLI runs hooks in
// (docs/platforms.md › launchers, with the sources). Pure functions of the platform, tested on Linux.

/** The launcher files: `sh` scripts and a symlink, or `.cmd` batch files and a junction. */
export type LauncherKind = 'sh' | 'cmd';

export function launcherKind(platform: NodeJS.Platform): LauncherKind {
  return platform === 'win32' ? 'cmd' : 'sh';
}

/**
 * The shell a CLI hands a hook's command string to. On Windows: Claude Code runs hooks in Git Bash
 * (a POSIX shell; its docs), Codex in the session's shell, PowerShell when there is one (codex-rs
 * shell_detect), Gemini CLI in PowerShell, VS Code's agent in PowerShell (Copilot's hook format).
 */
export type HookShell = 'sh' | 'powershell';

export function hookShell(platform: NodeJS.Platform, cli: string): HookShell {
  return platform === 'win32' && cli !== 'claude' ? 'powershell' : 'sh';
}

/** This machine's platform, for the pure functions here and the connect writers' paths. */
export const thisPlatform: NodeJS.Platform = process.platform;

/** This machine's launchers. */
export const thisLauncherKind: LauncherKind = launcherKind(thisPlatform);

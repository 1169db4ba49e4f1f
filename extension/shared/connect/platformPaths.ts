// The paths a connect writer builds are the target platform's: backslashes under %USERPROFILE% on
// Windows. A pure choice of the platform, so the Windows answer is tested on Linux.
import { posix, win32, type PlatformPath } from 'node:path';
import { thisPlatform } from '../platform/launcher';

export function pathFor(platform: NodeJS.Platform = thisPlatform): PlatformPath {
  return platform === 'win32' ? win32 : posix;
}

/**
 * The key Claude Code files a folder under in `~/.claude.json` › `projects`: on Windows it writes
 * the path with forward slashes (`C:/Users/ana/repo`), so a backslashed key would be a sibling it
 * never reads.
 */
export function claudeProjectKey(platform: NodeJS.Platform, workspace: string): string {
  return platform === 'win32' ? workspace.replace(/\\/g, '/') : workspace;
}

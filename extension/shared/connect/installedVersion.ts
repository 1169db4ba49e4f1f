// Which version of an agent CLI a user runs: what `<cli> --version` answers on the PATH connect runs
// with (its sessions are started from the same shell, as a rule). Unknown when it is not there.
import { spawnSync } from 'node:child_process';
import { parseVersion } from '../agentVersions';
import { thisLauncherKind } from '../platform/launcher';

/** A CLI that does not answer in this long is taken as unknown: connect never hangs on it. */
const VERSION_TIMEOUT_MS = 15_000;

export function installedVersion(cli: 'claude' | 'codex' | 'gemini'): string | undefined {
  const r = spawnSync(cli, ['--version'], {
    encoding: 'utf8',
    timeout: VERSION_TIMEOUT_MS,
    // npm's bins are .cmd files on Windows, which only a shell runs.
    shell: thisLauncherKind === 'cmd',
    stdio: ['ignore', 'pipe', 'ignore'],
    windowsHide: true,
  });
  return r.status === 0 ? parseVersion(r.stdout)?.join('.') : undefined;
}

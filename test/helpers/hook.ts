// Runs the real hook program (dist/hook.js) the way an agent CLI does: JSON on stdin, JSON (or
// nothing) on stdout, an exit code. Measures its wall time.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DIST, NODE } from './hubProcess';

export interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** The parsed stdout, when there was any. */
  json?: any;
}

/**
 * A hook still running after `killAfterMs` is killed (code null): a hook that hangs — or an idle
 * waiter nothing wakes, which would wait its 50 minutes — fails its test instead of holding the run.
 */
export function runHook(
  args: string[],
  input: Record<string, unknown>,
  env: Record<string, string> = {},
  killAfterMs = 20_000,
): Promise<HookRun> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [join(DIST, 'hook.js'), ...args], {
      // As Claude Code runs it (it marks its processes CLAUDECODE=1), unless the test says otherwise.
      env: { PATH: process.env.PATH ?? '', ...(args[0] === 'claude' ? { CLAUDECODE: '1' } : {}), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      const ms = performance.now() - started;
      let json: unknown;
      try {
        json = stdout.trim() ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, ms, json });
    });
    child.stdin.end(JSON.stringify(input));
  });
}

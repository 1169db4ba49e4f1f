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
  tree: 'test' | 'own' = 'test',
): Promise<HookRun> {
  const started = performance.now();
  // Every bridge a test spawns has this test process as its agent, so a hook it spawns runs under
  // all of them. 'own' runs the hook as a CLI with no live agent session here would: `setsid -f`
  // forks and its parent exits at once, so the hook's ancestry no longer reaches this process.
  // The code is then the fork's (0), not the hook's, and killAfterMs cannot reach the hook: use it
  // for hooks that end by themselves (not an idle waiter).
  const [command, argv] =
    tree === 'own'
      ? ['setsid', ['-f', NODE, join(DIST, 'hook.js'), ...args]]
      : [NODE, [join(DIST, 'hook.js'), ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, {
      // As Claude Code runs it (it marks its processes CLAUDECODE=1), unless the test says otherwise;
      // the no-Linux-powers lane's switches reach it too (without /proc it states only its parent).
      env: {
        PATH: process.env.PATH ?? '',
        ...(process.env.HANDOFF_POWERS_OFF ? { HANDOFF_POWERS_OFF: process.env.HANDOFF_POWERS_OFF } : {}),
        ...(args[0] === 'claude' ? { CLAUDECODE: '1' } : {}),
        ...env,
      },
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

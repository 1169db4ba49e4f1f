// `handoff connect` exactly as a user runs it: the real CLI, in the folder, with the agent CLI's HOME.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIST, NODE } from '../hubProcess';
import type { Cli } from './agents';

export function handoffConnect(cli: Cli, workspace: string, env: Record<string, string>, name: string): string {
  return execFileSync(NODE, [join(DIST, 'cli.js'), 'connect', cli, '--name', name], {
    cwd: workspace,
    env,
    encoding: 'utf8',
  });
}

/** The hook runs a test asked to trace (HANDOFF_HOOK_TRACE), one object per run. */
export interface HookTrace {
  cli: string;
  event: string;
  outcome: 'answered' | 'no hub' | 'no name' | 'budget' | 'not claude code' | 'not vscode agent';
  ids?: string[];
  ms: number;
}

/** The hook's trace file (HANDOFF_HOOK_TRACE), one record per hook run; none yet is empty. */
export function hookTraces(file: string): HookTrace[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as HookTrace)
    : [];
}

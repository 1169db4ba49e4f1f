// The commands an agent CLI runs for Handoff: the bridge (its MCP server) and the hook. Both pin
// the workspace, so they find its hub even when the CLI forwards no environment to them.
import { join } from 'node:path';

/** Which Node runs our programs, and where the built programs are. */
export interface Launch {
  node: string;
  dist: string;
  /** ELECTRON_RUN_AS_NODE when `node` is the desktop editor's binary; plain Node ignores it. */
  env?: Record<string, string>;
}

/** Marks every hook command we install, so disconnect removes exactly those. */
export const HOOK_MARK = '--from handoff-connect';

export function quote(arg: string): string {
  return /^[\w./:=@,+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function bridgeCommand(
  launch: Launch,
  name: string,
  workspace: string,
): { command: string; args: string[]; env: Record<string, string> } {
  return {
    command: launch.node,
    args: [join(launch.dist, 'bridge.js'), '--name', name, '--workspace', workspace],
    env: launch.env ?? {},
  };
}

/** A shell command line: the CLIs run hook commands through a shell. */
export function hookCommand(launch: Launch, cli: string, event: string, name: string, workspace: string): string {
  const env = Object.entries(launch.env ?? {})
    .map(([k, v]) => `${k}=${quote(v)} `)
    .join('');
  return (
    env +
    [launch.node, join(launch.dist, 'hook.js'), cli, event, '--name', name, '--workspace', workspace]
      .map(quote)
      .join(' ') +
    ` ${HOOK_MARK}`
  );
}

export function isOurHook(command: unknown): boolean {
  return typeof command === 'string' && command.endsWith(HOOK_MARK);
}

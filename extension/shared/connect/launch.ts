// The commands an agent CLI runs for Handoff: the bridge (its MCP server) and the hook. In git they
// name the CLI, not the agent: the name comes from the checkout they run in (shared/agentNames.ts),
// so one setup serves every worktree. Outside git the name (and the folder) is pinned in them.
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

/** Who the agent is: named by its checkout (`cli`), or pinned (`name`, outside git and VS Code's agent). */
export interface AgentRef {
  cli: string;
  name?: string;
  /** Pinned hub folder; unpinned, the hub is the one of the folder the agent runs in. */
  workspace?: string;
}

function refArgs(ref: AgentRef): string[] {
  return [
    ...(ref.name !== undefined ? ['--name', ref.name] : []),
    ...(ref.workspace !== undefined ? ['--workspace', ref.workspace] : []),
  ];
}

export function bridgeCommand(
  launch: Launch,
  ref: AgentRef,
): { command: string; args: string[]; env: Record<string, string> } {
  return {
    command: launch.node,
    args: [join(launch.dist, 'bridge.js'), '--cli', ref.cli, ...refArgs(ref)],
    env: launch.env ?? {},
  };
}

/** A shell command line: the CLIs run hook commands through a shell. */
export function hookCommand(launch: Launch, ref: AgentRef, event: string): string {
  const env = Object.entries(launch.env ?? {})
    .map(([k, v]) => `${k}=${quote(v)} `)
    .join('');
  return (
    env +
    [launch.node, join(launch.dist, 'hook.js'), ref.cli, event, ...refArgs(ref)].map(quote).join(' ') +
    ` ${HOOK_MARK}`
  );
}

export function isOurHook(command: unknown): boolean {
  return typeof command === 'string' && command.endsWith(HOOK_MARK);
}

// The commands an agent CLI runs for Handoff: the bridge (its MCP server) and the hook. In git they
// name the CLI, not the agent: the name comes from the checkout they run in (shared/agentNames.ts),
// so one setup serves every worktree. Outside git the name (and the folder) is pinned in them.
import { hookShell, thisPlatform } from '../platform/launcher';
import { pathFor } from './platformPaths';
import { batchSafeArg, psCommand, shQuote } from './quote';

/** Which Node runs our programs, and where the built programs are. */
export interface Launch {
  node: string;
  dist: string;
  /** ELECTRON_RUN_AS_NODE when `node` is the desktop editor's binary; plain Node ignores it. */
  env?: Record<string, string>;
  /** Windows: the `.cmd` launcher that runs the hook (it knows its Node and build; launchers.ts). */
  hook?: string;
}

/** Marks every hook command we install, so disconnect removes exactly those. */
export const HOOK_MARK = '--from handoff-connect';

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
  platform = thisPlatform,
): { command: string; args: string[]; env: Record<string, string> } {
  return {
    command: launch.node,
    args: [pathFor(platform).join(launch.dist, 'bridge.js'), '--cli', ref.cli, ...refArgs(ref)],
    env: launch.env ?? {},
  };
}

/**
 * A command line for the shell the CLI runs hook commands in (platform/launcher.ts): a POSIX shell,
 * or on Windows PowerShell for Codex, Gemini and VS Code. Through a `.cmd` launcher the arguments
 * are parsed by cmd.exe once more, so a pinned name or folder with its operators is refused.
 */
export function hookCommand(launch: Launch, ref: AgentRef, event: string, platform = thisPlatform): string {
  if (launch.hook !== undefined) {
    const shell = hookShell(platform, ref.cli);
    const args = [ref.cli, event, ...refArgs(ref)].map(batchSafeArg);
    const line = shell === 'powershell' ? psCommand(launch.hook, args) : [launch.hook, ...args].map(shQuote).join(' ');
    return `${line} ${HOOK_MARK}`;
  }
  const env = Object.entries(launch.env ?? {})
    .map(([k, v]) => `${k}=${shQuote(v)} `)
    .join('');
  return (
    env +
    [launch.node, pathFor(platform).join(launch.dist, 'hook.js'), ref.cli, event, ...refArgs(ref)]
      .map(shQuote)
      .join(' ') +
    ` ${HOOK_MARK}`
  );
}

export function isOurHook(command: unknown): boolean {
  return typeof command === 'string' && command.endsWith(HOOK_MARK);
}

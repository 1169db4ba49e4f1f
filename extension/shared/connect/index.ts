// One entry for `handoff connect|disconnect <cli>` and the editor's Connect commands: both decide
// the folder and the agent's name here, so they always agree and say the same.
import { relative } from 'node:path';
import { agentNameIn, recordAgentName } from '../agentNames';
import { versionLimits } from '../agentVersions';
import { findCheckout, linkedWorktrees, type Checkout } from '../repository';
import { canonical } from '../paths';
import { connectClaude, disconnectClaude } from './claude';
import { connectCodex, disconnectCodex } from './codex';
import { applyChanges, type FileChange } from './files';
import { connectGemini, disconnectGemini } from './gemini';
import { installedVersion } from './installedVersion';
import type { Launch } from './launch';
import type { ConnectOptions } from './types';
import { connectVsCode, disconnectVsCode, VSCODE_AGENT_NAME } from './vscode';

/** `vscode`: VS Code's own agent (hooks only; its MCP server is the editor's). */
export const AGENT_CLIS = ['claude', 'codex', 'gemini', 'vscode'] as const;
export type AgentCli = (typeof AGENT_CLIS)[number];
export type { ConnectOptions, FileChange };
export type { Launch } from './launch';

export interface ConnectRequest {
  /** The hub's folder (findWorkspace / workspaceOf): the repository's main checkout in git. */
  workspace: string;
  /** Where connect was asked for (the cwd, --workspace, the window's folder): its checkout is named. */
  folder: string;
  /** The agent's name here; recorded for this checkout in git. Default: the name it has already. */
  name?: string;
  /** A checkout whose agent already has a recorded name gets `name` only with this. */
  rename?: boolean;
  launch: Launch;
  home?: string;
  codexHome?: string;
  /** The CLI's version, when the caller knows it; else `<cli> --version` on PATH is asked. */
  version?: string | null;
}

/** One file written, and what was written in it. */
export type Written = Pick<FileChange, 'path' | 'what'>;

export interface Connected {
  workspace: string;
  changes: Written[];
  /** The agent's name in `folder`'s checkout, and why it is that. */
  name: string;
  how: 'recorded' | 'derived' | 'pinned';
  /** "the main checkout", "the worktree <folder> on branch <b>", or the folder outside git. */
  where: string;
  /** The CLI's version on PATH (`<cli> --version`), if it answered. */
  version?: string;
  /** What this version cannot do here, in words a person reads (agentVersions.ts). */
  limits: string[];
}

function describe(c: Checkout): string {
  if (!c.linked) return 'the main checkout';
  return `the worktree ${c.folder}${c.branch !== undefined ? ` on branch ${c.branch}` : ' (detached)'}`;
}

function options(r: ConnectRequest, repository: boolean, name?: string): ConnectOptions {
  return { workspace: r.workspace, name, repository, launch: r.launch, home: r.home, codexHome: r.codexHome };
}

/** Registers the bridge and installs the hooks; returns what was written where (nothing when already so). */
export async function connectAgent(cli: AgentCli, r: ConnectRequest): Promise<Connected> {
  const checkout = cli === 'vscode' ? undefined : findCheckout(canonical(r.folder));
  const version =
    cli === 'vscode' ? undefined : r.version === undefined ? installedVersion(cli) : (r.version ?? undefined);
  // In a repository the limits of worktrees count wherever connect runs: its worktrees share the setup.
  const limits = cli === 'vscode' ? [] : versionLimits(cli, version, checkout ? undefined : false);
  if (!checkout) {
    const name = r.name ?? (cli === 'vscode' ? VSCODE_AGENT_NAME : cli);
    const o = options(r, false, name);
    const changes = applyChanges(
      cli === 'claude'
        ? connectClaude(o)
        : cli === 'codex'
          ? connectCodex(o)
          : cli === 'gemini'
            ? connectGemini(o)
            : connectVsCode(o),
    );
    return { workspace: r.workspace, changes, name, how: 'pinned', where: r.workspace, version, limits };
  }
  // The name first: a name another worktree holds refuses the whole connect before any file changes.
  const recorded = r.name !== undefined ? await recordAgentName(cli, r.name, checkout, r.rename) : undefined;
  const o = options(r, true);
  const own = canonical(checkout.folder);
  const planned =
    cli === 'claude'
      ? // What an earlier connect wrote for this worktree itself is never read by Claude Code: tidied away.
        [...(own !== r.workspace ? disconnectClaude({ workspace: own, home: r.home }) : []), ...connectClaude(o)]
      : cli === 'codex'
        ? connectCodex(o)
        : connectGemini({
            ...o,
            trust: linkedWorktrees(checkout.commonDir)
              .map(canonical)
              .filter((w) => relative(r.workspace, w).startsWith('..')),
          });
  const changes: Written[] = applyChanges(planned);
  if (recorded?.changed)
    changes.unshift({
      path: recorded.path,
      what: `the ${cli} agent in ${describe(checkout)} is "${r.name}"${recorded.was ? ` (was "${recorded.was}")` : ''}`,
    });
  const named = agentNameIn(cli, checkout);
  return {
    workspace: r.workspace,
    changes,
    name: named.name,
    how: named.how,
    where: describe(checkout),
    version,
    limits,
  };
}

/** Removes exactly what connect added (a recorded name stays: connecting again keeps it). */
export function disconnectAgent(cli: AgentCli, r: ConnectRequest): FileChange[] {
  const repository = cli !== 'vscode' && findCheckout(canonical(r.folder)) !== undefined;
  const o = options(r, repository);
  return applyChanges(
    cli === 'claude'
      ? disconnectClaude(o)
      : cli === 'codex'
        ? disconnectCodex(o)
        : cli === 'gemini'
          ? disconnectGemini(o)
          : disconnectVsCode(o),
  );
}

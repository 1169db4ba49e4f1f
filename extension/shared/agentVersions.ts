// Which versions of each agent CLI Handoff reaches fully, and what an older one lacks, as measured
// with the real CLIs (docs/agents.md › Versions; test/agents/versions.test.ts). Connect says it for
// the CLI on PATH; the hub says it for a session by the version its MCP client reports.
import type { HookCli } from '../protocol/hook';

type AgentCliName = Exclude<HookCli, 'vscode'>;

interface Limit {
  /** The first version without this limit. */
  since: string;
  /** Where the limit bites: only in a linked worktree, or anywhere. */
  inWorktreeOnly: boolean;
  /** What an older version does not do, as a person reads it. */
  lacks: string;
}

const LIMITS: Record<AgentCliName, Limit[]> = {
  claude: [
    {
      since: '2.1.211',
      inWorktreeOnly: true,
      // Measured: 2.1.197 to 2.1.210 ran 0 of the main checkout's hooks in a worktree; 2.1.211 ran them.
      lacks:
        "reads hooks only from the folder a session starts in, so in a worktree none of Handoff's hooks run: its model sees a handoff only when it calls Handoff's inbox, never while it is busy, and an idle session is not woken",
    },
  ],
  codex: [],
  gemini: [],
};

const LABEL: Record<AgentCliName, string> = { claude: 'Claude Code', codex: 'Codex', gemini: 'Gemini CLI' };

/** The first x.y.z in a CLI's `--version` line or an MCP clientInfo version ("2.1.197 (Claude Code)"). */
export function parseVersion(text: string | undefined): number[] | undefined {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(text ?? '');
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

function older(v: number[], than: number[]): boolean {
  for (let i = 0; i < 3; i++) if (v[i] !== than[i]) return v[i] < than[i];
  return false;
}

/**
 * What this version of the CLI cannot do here, one sentence each (none when it is supported, or the
 * version is unknown). `inWorktree` undefined: anywhere in a repository (connect, before any session).
 */
export function versionLimits(
  cli: AgentCliName | undefined,
  version: string | undefined,
  inWorktree?: boolean,
): string[] {
  const v = parseVersion(version);
  if (!cli || !v) return [];
  return LIMITS[cli]
    .filter((l) => older(v, parseVersion(l.since)!) && (inWorktree !== false || !l.inWorktreeOnly))
    .map(
      (l) =>
        `${LABEL[cli]} ${v.join('.')} ${l.lacks}. ${LABEL[cli]} ${l.since} and later do: update it (npm install -g ${PACKAGE[cli]}@latest).`,
    );
}

const PACKAGE: Record<AgentCliName, string> = {
  claude: '@anthropic-ai/claude-code',
  codex: '@openai/codex',
  gemini: '@google/gemini-cli',
};

/** The agent CLI behind an MCP client name (its initialize's clientInfo.name), for the version's limits. */
export function cliOfMcpClient(client: string | undefined): AgentCliName | undefined {
  if (client === 'claude-code') return 'claude';
  if (client === 'codex-mcp-client') return 'codex';
  if (client === 'gemini-cli-mcp-client') return 'gemini';
  return undefined;
}

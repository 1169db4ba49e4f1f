// Whose agent a process runs under: the nearest of its ancestors that is a live session's agent
// process. Hooks surface only into that session, and a bridge there may not speak for an identity
// that is live elsewhere (#23); a bridge that only states its process may not speak for one whose
// process the hub proved, and only VS Code's own agent is copilot (#42).
import { basename } from 'node:path';
import { BusError } from '../bus/errors';
import type { ProcessCommand } from '../../shared/proc';
import { VSCODE_AGENT_NAME } from '../../shared/connect/vscode';

interface AgentSession {
  readonly key: string;
  readonly identity: string;
  readonly agentPid?: number;
  /** Set when the hub proved the bridge's process (processProof.ts); a stated session has none. */
  readonly ancestry?: readonly number[];
}

/** The live sessions of the nearest ancestor that is an agent process (none if no ancestor is). */
export function nearestAgent<S extends AgentSession>(ancestors: readonly number[], live: readonly S[]): S[] {
  for (const pid of ancestors) {
    const under = live.filter((s) => s.agentPid === pid);
    if (under.length > 0) return under;
  }
  return [];
}

/**
 * Why a new bridge session for `identity` may not attach, if it may not: its proven ancestry (the
 * bridge first) runs through another identity's live agent while `identity` is live elsewhere —
 * an agent starting `handoff-mcp --name <a live peer>` in its shell to read, ACK or send in that
 * peer's name. A sub-agent an agent starts under a name nobody else holds live is its own.
 */
export function bridgeRefusal(
  session: AgentSession & { readonly ancestry?: readonly number[] },
  live: readonly AgentSession[],
): BusError | undefined {
  if (!session.ancestry) return undefined;
  const others = live.filter((s) => s.key !== session.key);
  const under = nearestAgent(session.ancestry.slice(1), others);
  if (under.length === 0 || under.some((s) => s.identity === session.identity)) return undefined;
  if (!others.some((s) => s.identity === session.identity)) return undefined;
  const whose = [...new Set(under.map((s) => s.identity))].join(', ');
  return new BusError(
    'not_your_channel',
    `This bridge runs under the agent session of ${whose}, and ${session.identity} is live in a session of its own: it cannot speak for ${session.identity} from inside ${whose}'s agent. Nothing was recorded. A sub-agent that ${whose} starts needs a name of its own.`,
  );
}

/**
 * Why a session whose bridge offered no proof of its process (a hello without `proves`) may not
 * attach as `identity`, if it may not: a session of `identity` whose process the hub proved is
 * live. Every bridge of ours offers the proof where the hub can check it, so a stated hello beside
 * a proven session is one line written by hand — or a bridge from before the proof, which its
 * agent's restart replaces. Where nothing is proven (no /proc) no session has an ancestry and this
 * never refuses.
 */
export function statedRefusal(session: AgentSession, live: readonly AgentSession[]): BusError | undefined {
  if (session.ancestry) return undefined;
  if (!live.some((s) => s.key !== session.key && s.identity === session.identity && s.ancestry)) return undefined;
  return new BusError(
    'not_your_channel',
    `This bridge did not prove which process it is, and ${session.identity} is live in a session whose process the hub proved: a session that only states its process cannot speak for ${session.identity} beside it. Nothing was recorded. A bridge from before an update proves itself once its agent restarts.`,
  );
}

/**
 * A Copilot agent's own process: the runtime VS Code's Agent Host runs its Copilot sessions in
 * (`copilot-runtime`, from @github/copilot-sdk), or the Copilot CLI (its binary, or its package's
 * script under Node).
 */
export function isCopilotProcess(c: ProcessCommand): boolean {
  const names = [c.exe, c.argv[0]].map((n) => (n ? basename(n) : ''));
  return (
    names.some((n) => n === 'copilot-runtime' || n === 'copilot') ||
    c.argv.slice(1, 3).some((a) => /[\\/]@github[\\/]copilot[\\/]/.test(a))
  );
}

/** A process as the refusal names it: `claude (pid 12)`, `node cli.js (pid 12)`. */
function described(pid: number, c: ProcessCommand | undefined): string {
  if (!c) return `process ${pid}`;
  const exe = c.exe ?? basename(c.argv[0] ?? '?');
  const script = exe === 'node' && c.argv[1] ? ` ${basename(c.argv[1])}` : '';
  return `${exe}${script} (pid ${pid})`;
}

/**
 * Why a bridge may not be copilot, if it may not. `copilot` is VS Code's own agent: the identity
 * the editor's MCP server definition names (client/mcpProvider.ts). VS Code hands that definition
 * to every agent it runs, and its Agent Host's Claude and Codex sessions start it as their own
 * child, beside the server their own `handoff connect` set up. So the name is taken only from a
 * bridge whose parent (proven from /proc) is an editor window's extension host, where VS Code's
 * own agent starts its MCP servers, or a Copilot process (the Agent Host's Copilot sessions).
 * Unproven bridges (no /proc) are taken as stated, as everywhere.
 */
export function editorAgentRefusal(
  session: { readonly identity: string; readonly ancestry?: readonly number[] },
  extensionHosts: ReadonlySet<number>,
  commandOf: (pid: number) => ProcessCommand | undefined,
): BusError | undefined {
  if (session.identity !== VSCODE_AGENT_NAME || !session.ancestry) return undefined;
  const parent = session.ancestry[1];
  if (parent !== undefined && extensionHosts.has(parent)) return undefined;
  const command = parent === undefined ? undefined : commandOf(parent);
  if (command && isCopilotProcess(command)) return undefined;
  const by = parent === undefined ? 'no process of its own' : described(parent, command);
  return new BusError(
    'not_your_channel',
    `${VSCODE_AGENT_NAME} is VS Code's own agent: only a bridge started by an editor window's extension host or by a Copilot session speaks as ${VSCODE_AGENT_NAME}, and this one was started by ${by}. Nothing was recorded. An agent of its own speaks through the Handoff server that \`handoff connect\` set up for its CLI (in Claude Code: the mcp__handoff__ tools), as itself.`,
  );
}

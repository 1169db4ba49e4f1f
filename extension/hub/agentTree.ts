// Whose agent a process runs under: the nearest of its ancestors that is a live session's agent
// process. Hooks surface only into that session, and a bridge there may not speak for an identity
// that is live elsewhere (#23).
import { BusError } from './bus/errors';

interface AgentSession {
  readonly key: string;
  readonly identity: string;
  readonly agentPid?: number;
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

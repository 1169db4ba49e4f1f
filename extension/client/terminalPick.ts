// Which of this window's integrated terminals runs an agent, and whether typing into it now is
// safe: plain data in, a decision out, so the rules are tested without an editor.

/** One integrated terminal, as the window sees it when asked. */
export interface TerminalFacts {
  name: string;
  /** Its shell's process (or the program it was started with); undefined until it runs. */
  shellPid?: number;
  /** It is the window's active terminal: keystrokes in the terminal panel go there. */
  active: boolean;
  /** When the person was last at it: the active terminal while the window had focus. */
  personAt?: number;
}

export type TerminalPick = { index: number } | { why: string; found: boolean; retryInMs?: number };

/**
 * The terminal whose process is the agent or its nearest ancestor (`chain`: the agent, then its
 * parents, nearest first), unless the person is at it: it is the active terminal of the focused
 * window, or was within `quietMs`. Then the answer says when to ask again.
 */
export function pickTerminal(
  terminals: readonly TerminalFacts[],
  chain: readonly number[],
  focused: boolean,
  now: number,
  quietMs: number,
): TerminalPick {
  let best: { index: number; depth: number } | undefined;
  terminals.forEach((t, index) => {
    const depth = t.shellPid === undefined ? -1 : chain.indexOf(t.shellPid);
    if (depth >= 0 && (!best || depth < best.depth)) best = { index, depth };
  });
  if (!best) return { found: false, why: 'no integrated terminal of this window runs it' };
  const t = terminals[best.index];
  if (focused && t.active)
    return {
      found: true,
      why: `"${t.name}" is the active terminal of the focused window: the person may be typing there`,
      retryInMs: quietMs,
    };
  const since = t.personAt === undefined ? Infinity : now - t.personAt;
  if (since < quietMs)
    return {
      found: true,
      why: `the person was at "${t.name}" ${Math.round(since / 1000)} s ago`,
      retryInMs: quietMs - since,
    };
  return { index: best.index };
}

/** The agent's process chain, nearest first, without repeats: itself, /proc's parents, then the hook's. */
export function processChain(agentPid: number, parents: readonly number[], reported: readonly number[]): number[] {
  return [...new Set([agentPid, ...parents, ...reported])];
}

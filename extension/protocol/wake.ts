// The hub asking an editor window to wake an idle agent in one of its integrated terminals: only
// the editor knows which terminal runs which process, and only it can type there. The window
// builds the line itself from the senders' names, so whatever speaks on the hub's side can never
// make it type anything but this one sentence.
import { IDENTITY_PATTERN } from './names';

/** Senders named in one wake line, at most: the rest wait for the inbox. */
export const WAKE_FROM_MAX = 5;
/** Input at the terminal this recently means a person is there (may still be reading, or about to type): wait for them. */
export const QUIET_MS = 10_000;
/** Text and Enter in one burst reads as a paste to some CLIs, which then do not submit it. */
export const ENTER_AFTER_MS = 300;

export interface TerminalWakeParams {
  /** The agent CLI process (the bridge's parent, or the nearest ancestor a hook reported). */
  agentPid: number;
  /** Its ancestors as a hook saw them, nearest first; the window walks /proc for the rest. */
  ancestors: number[];
  /** Who sent what is waiting, and how many handoffs, for the line the window types. */
  from: string[];
  count: number;
}

/**
 * `found`: a terminal of this window runs the agent (so its refusal is the one that counts);
 * `retryInMs`: the person is at it, ask again once it has been quiet this long.
 */
export type TerminalWakeAnswer =
  { woken: true; terminal: string } | { woken: false; why: string; found: boolean; retryInMs?: number };

/** What a window's "handoff.wakeIdleAgents" allows: off wins over ask, ask over on, across windows. */
export type WakeMode = 'off' | 'ask' | 'on';
export const WAKE_MODES: readonly WakeMode[] = ['off', 'ask', 'on'];

/** Hub → the person's window, with "ask": may this idle agent be woken now? */
export interface WakeAskParams {
  identity: string;
  cli: string;
  /** Where the line would be typed: "tmux pane %3", "its editor terminal". */
  where: string;
  from: string[];
  count: number;
}
export interface WakeAskAnswer {
  wake: boolean;
}

/** The line typed into an idle agent's terminal, in tmux or the editor alike. */
export function wakeLine(from: readonly string[], count: number): string {
  return `New handoff${count > 1 ? 's' : ''} from ${from.join(', ')} — check your Handoff inbox`;
}

const isPid = (n: unknown): n is number => Number.isInteger(n) && (n as number) > 0 && (n as number) < 2 ** 31;

const fromOk = (from: unknown): from is string[] =>
  Array.isArray(from) &&
  from.length >= 1 &&
  from.length <= WAKE_FROM_MAX &&
  from.every((f) => typeof f === 'string' && IDENTITY_PATTERN.test(f));

/** The question if well formed (the window shows only names and counts it checked), else why not. */
export function readWakeAskParams(p: unknown): WakeAskParams | string {
  const v = (p ?? {}) as Partial<Record<keyof WakeAskParams, unknown>>;
  if (typeof v.identity !== 'string' || !IDENTITY_PATTERN.test(v.identity)) return 'identity must be an identity name';
  if (typeof v.cli !== 'string' || !/^[a-z]{1,16}$/.test(v.cli)) return 'cli must be a CLI name';
  if (typeof v.where !== 'string' || !/^[\w %.-]{1,40}$/.test(v.where)) return 'where must be a short place name';
  if (!fromOk(v.from)) return `from must name 1 to ${WAKE_FROM_MAX} identities`;
  if (!Number.isInteger(v.count) || (v.count as number) < 1) return 'count must be a positive integer';
  return { identity: v.identity, cli: v.cli, where: v.where, from: v.from, count: v.count as number };
}

/** The params if well formed (the window checks what it is asked before typing anything), else why not. */
export function readWakeParams(p: unknown): TerminalWakeParams | string {
  const v = (p ?? {}) as Partial<Record<keyof TerminalWakeParams, unknown>>;
  if (!isPid(v.agentPid)) return 'agentPid must be a process id';
  if (!Array.isArray(v.ancestors) || v.ancestors.length > 64 || !v.ancestors.every(isPid))
    return 'ancestors must be process ids';
  if (!fromOk(v.from)) return `from must name 1 to ${WAKE_FROM_MAX} identities`;
  if (!Number.isInteger(v.count) || (v.count as number) < 1) return 'count must be a positive integer';
  return {
    agentPid: v.agentPid,
    ancestors: v.ancestors as number[],
    from: v.from as string[],
    count: v.count as number,
  };
}

// The hook's one exchange with the hub: a hello line that is the whole request, answered by the
// hub's hello reply and one result line; when that carries handoffs, the hook writes HOOK_ACK once
// its CLI has them. Kept tiny: the hook runs on every tool call of an agent.
import type { HELLO_VERSION, SecretProof } from './helloVersion';

/** The hook's confirmation that it handed the answer to its CLI: then the hub records `surfaced`. */
export const HOOK_ACK = 'ack';

/**
 * Linux: after the hello the hub names a fresh file of its own; the hook (or a bridge, in its hello
 * reply) opens it, keeps it open and answers with its pid. The hub then finds that file among
 * /proc/<pid>/fd and reads the ancestry from the kernel, not from the hello (a process can state
 * any ancestry, #23).
 */
export interface HookChallenge {
  /** Absolute path of the file to open, in the hub's private directory. */
  challenge: string;
}
export interface ProcessProof {
  pid: number;
}
/** Longest challenge path a hook opens; the hub's are far shorter. */
export const MAX_CHALLENGE_PATH = 1024;
/** Longest proof line the hub reads before it closes the connection. */
export const MAX_PROOF_BYTES = 128;

/** `vscode`: VS Code's own agent (Copilot Chat), with hooks of its own in .github/hooks. */
export const HOOK_CLIS = ['claude', 'codex', 'gemini', 'vscode'] as const;
export type HookCli = (typeof HOOK_CLIS)[number];

/**
 * Where in the agent's loop the hook fired: session start, prompt submit, after a tool call, at
 * the end of a turn, or an idle waiter (Claude Code's asyncRewake) that returns once mail arrives.
 */
export const HOOK_PHASES = ['start', 'prompt', 'tool', 'stop', 'wait'] as const;
export type HookPhase = (typeof HOOK_PHASES)[number];

/**
 * Where the agent's CLI runs, when the hook can tell: the tmux pane (from TMUX and TMUX_PANE), so
 * the hub can wake an idle session by typing into it as a person would.
 */
export interface HookTerminal {
  kind: 'tmux';
  /** The tmux server's socket (TMUX's first field). */
  socket: string;
  /** The pane id, `%N`. */
  pane: string;
}

export interface HookHello extends SecretProof {
  handoff: typeof HELLO_VERSION;
  kind: 'hook';
  cli: HookCli;
  phase: HookPhase;
  /** The CLI's hook event name, for the record (`PostToolUse`, `AfterTool`…). */
  event: string;
  identity: string;
  /** The CLI's own session id (from the hook's stdin), so two sessions of one identity stay apart. */
  session: string;
  /**
   * The hook's parent processes, nearest first: the hub matches them to the bridge's agent pid.
   * Stated, so trusted only where the hub cannot prove it (no /proc): elsewhere the hub reads them.
   */
  ancestors: number[];
  /** wait only: how long to hold the connection before answering with nothing. */
  waitMs?: number;
  terminal?: HookTerminal;
}

export interface HookItem {
  id: string;
  from: string;
  /** The handoff as the model reads it: header, fenced untrusted body, what to do. */
  text: string;
  replayed: boolean;
}

export interface HookAnswer {
  items: HookItem[];
  /** Further unsurfaced handoffs not included (bounded output); the text tells the model to call inbox. */
  more: number;
  /** The session key the surfacing was recorded under (the agent's MCP session when matched). */
  session: string;
}

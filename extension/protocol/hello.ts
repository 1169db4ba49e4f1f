// The first line a client writes on the hub socket says what it is; everything after it is
// newline-delimited JSON-RPC (MCP for agents, the control protocol for the editor and CLI).

import type { HookHello, HookTerminal } from './hook';
import type { LinkHello, LinkHelloReply } from './link';
import type { HELLO_VERSION, SecretProof } from './helloVersion';

export interface AgentHello extends SecretProof {
  handoff: typeof HELLO_VERSION;
  kind: 'mcp';
  /** Identity name from --name / HANDOFF_AGENT; absent means "register later through whoami". */
  identity?: string;
  /** Stable across reconnects when the agent sets HANDOFF_SESSION, so a reconnect replaces its entry. */
  session?: string;
  roles?: string[];
  pid?: number;
  /** The bridge's parent: the agent CLI process, whose hooks the hub matches to this session. */
  agentPid?: number;
  client?: string;
  /** The bridge reconnecting after its hub went away, for the same client session as before. */
  resume?: boolean;
  /** The tmux pane the agent runs in, if the bridge can tell. */
  terminal?: HookTerminal;
  /** The checkout the agent runs in (a worktree of the hub's repository), as the bridge read it. */
  checkout?: CheckoutPlace;
  /**
   * The bridge answers the hub's challenge (reply's `challenge`) with a ProcessProof line before
   * any MCP, so the hub knows its process and ancestry from the kernel (Linux, hook.ts).
   */
  proves?: boolean;
}

/** Where in a repository an agent runs: shown by whoami and list_peers, never trusted for routing. */
export interface CheckoutPlace {
  folder: string;
  branch?: string;
  /** A linked worktree rather than the main checkout. */
  linked: boolean;
}

export interface ControlHello extends SecretProof {
  handoff: typeof HELLO_VERSION;
  kind: 'control';
  client?: string;
  /** This hub's editor key (protocol/editorKey.ts): an editor window sharing the hub, not the CLI. */
  editorKey?: string;
}

export type Hello = AgentHello | ControlHello | HookHello | LinkHello;

/** The hub's one-line answer to a hello, before any JSON-RPC. */
export interface HelloReply {
  handoff: typeof HELLO_VERSION;
  ok: boolean;
  error?: string;
  node?: string;
  workspace?: string;
  pid?: number;
  /** For a control connection: what the hub serves it as (`editor` only with the hub's editor key). */
  channel?: 'editor' | 'cli';
  /** The hub runs as `handoff hub` (no editor window started it, none holds its key). */
  headless?: boolean;
  /** For a bridge that `proves`: the file to open and keep open before answering with its pid. */
  challenge?: string;
  /** The hub's proof back, for a hello with a `nonce`: the client then knows this hub is its user's. */
  hubProof?: string;
  /** For a link hello (another repository's hub): this hub's name, key and signature over its nonce. */
  link?: LinkHelloReply;
}

export const MAX_HELLO_BYTES = 4096;

// The bus's data as it crosses a process boundary (hub ⇄ editor, CLI, webview, Matrix): messages,
// per-recipient deliveries and their receipts. Plain data, imported by the bus and by every client.

export type PushKind = 'live' | 'replayed' | 'chase';
export type ReceiptKind = 'read' | 'ack' | 'result';
export type Outcome = 'done' | 'stuck' | 'rejected';
/** How a handoff entered the recipient model's context: a CLI hook, a Handoff tool result, a channel. */
export type SurfacePath = 'hook' | 'tool_result' | 'channel';

/**
 * Per recipient: queued → pushed → surfaced → read → acked → done | stuck, or failed (with a
 * reason). `surfaced` is reported by the recipient side (its hook or tool result), never by a push.
 */
export type DeliveryState = 'queued' | 'pushed' | 'surfaced' | 'read' | 'acked' | 'done' | 'stuck' | 'failed';

export interface Attachment {
  path: string;
  sha256: string;
  bytes: number;
}

export interface Message {
  id: string;
  seq: number;
  from: string;
  /** What the sender wrote: identities, `role:NAME` or `*`. */
  address: string[];
  /** The identities it resolved to when it was sent. */
  recipients: string[];
  thread: string;
  replyTo?: string;
  body: string;
  attachments: Attachment[];
  requiresAck: boolean;
  slaMs: number;
  ttlMs: number;
  idempotencyKey?: string;
  sentAt: number;
  sentBySession: string;
  node: string;
  /** Set when not sent from an agent's MCP session (the CLI, the editor). */
  channel?: Channel;
  /** Sent by a person (at the editor, or the CLI as themself), not by an agent: it reads so to the recipient. */
  person?: true;
  /** Set on a hub that received the message from another node: the Matrix event it came in. */
  origin?: Origin;
  /** Who this handoff escalates to once chased and still unacknowledged; else the sender's hub's person. */
  escalateTo?: string;
  /** Set on an escalation: which handoff went unacknowledged, and by whom. */
  escalation?: Escalation;
}

/** An escalation names the handoff that went unanswered and the recipient who stayed silent. */
export interface Escalation {
  of: string;
  silent: string;
}

/** The Matrix event a remote message arrived in, and the Matrix user who sent it. */
export interface Origin {
  room: string;
  eventId: string;
  sender: string;
}

/** Who did something, from which session and node, and when. */
/**
 * The channel a send or receipt came through, which is how the hub knows who may speak: an
 * agent's own MCP session, an editor window of the hub (its stdio, or the socket with the hub's
 * editor key), the socket's other control connections (the CLI), or another node over Matrix.
 */
export type Channel = 'agent' | 'editor' | 'cli' | 'remote';

/** How a channel reads next to a receipt; a record from before channels reads as an agent's. */
export const CHANNEL_WORDS: Record<Channel, string> = {
  agent: 'its MCP session',
  editor: 'the editor window',
  cli: 'the CLI (socket control)',
  remote: 'another node',
};

export interface Stamp {
  by: string;
  session: string;
  node: string;
  at: number;
  /** Absent on records written before channels were recorded. */
  channel?: Channel;
}

export interface Receipt extends Stamp {
  kind: ReceiptKind;
  outcome?: Outcome;
  summary?: string;
}

export interface Push {
  session: string;
  node: string;
  at: number;
  kind: PushKind;
}

/** The handoff entered a model's context: in which session, how, when; `replayed` if not the first time for this identity. */
export interface Surfacing {
  session: string;
  node: string;
  at: number;
  path: SurfacePath;
  /** The CLI and hook event (e.g. `claude PostToolUse`) or the tool that showed it. */
  via: string;
  replayed: boolean;
  /** A hook's record under its agent's MCP session: the CLI's own session (`claude:<id>`) it ran in. */
  cliSession?: string;
  /**
   * Its hook ran under no live agent session (a CLI whose bridge was not connected yet, or a
   * process outside every agent's tree, which may speak for any identity): shown so it stands out.
   */
  underNoAgent?: true;
  /**
   * Its hook's process, or the bridge session's it was recorded in, was not proven (no /proc, or a
   * bridge that offered no proof: docs/platforms.md): which agent it ran under is as stated, which
   * any local process can.
   */
  stated?: true;
}

/**
 * The hub typed a short prompt into an idle session's terminal so its CLI starts a turn. Not a
 * receipt: only the hook that then runs records `surfaced`.
 */
export interface Wake {
  session: string;
  node: string;
  at: number;
  /** tmux, typed by the hub; terminal, typed by an editor window into its integrated terminal. */
  how: 'tmux' | 'terminal';
  /** Which terminal: the tmux pane id, or the integrated terminal's name. */
  terminal: string;
}

export interface Delivery {
  recipient: string;
  state: DeliveryState;
  pushes: Push[];
  /** When a push to a live session was first about to happen: a later push is a replay, even if the push record was lost. */
  offeredAt?: number;
  /** Absent in stores written before surfacing existed. */
  surfacings?: Surfacing[];
  /** Wakes typed into the recipient's idle sessions, at most one per session. */
  wakes?: Wake[];
  receipts: Receipt[];
  failure?: { reason: string; at: number };
  chasedAt?: number;
  /** Escalated once, to whom and when, as which handoff (the escalation's id). */
  escalated?: { to: string; at: number; messageId: string };
}

export interface Resolution {
  by: string;
  at: number;
  note?: string;
}

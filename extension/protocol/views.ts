// What the hub reports: a send's answer, the ledger, coverage, the Matrix link's status and the
// snapshot the editor renders. Plain data; the hub computes it (extension/hub/bus/), clients show it.
import type { Channel, Delivery, DeliveryState, Message, Resolution } from './model';
import type { WakeMode } from './wake';
import type { LinksView } from './link';

/** When a recipient's model will see a handoff sent now, as far as this hub can tell. */
export type SeenWhen = 'now' | 'next_tool_call' | 'next_turn' | 'when_it_calls_inbox' | 'in_their_editor';

/** The same, as a sender reads it. */
export const SEEN_TEXT: Record<SeenWhen | 'on_another_node', string> = {
  now: 'its idle session is woken with it now',
  next_tool_call: 'its model sees it after its current tool call',
  next_turn: 'its model sees it at its next turn',
  when_it_calls_inbox: 'its model sees it only when it calls inbox (no Handoff hooks heard from it)',
  in_their_editor: 'a person: it waits in the inbox of their Handoff view until they open it',
  on_another_node: 'its own hub tells when it is seen',
};

export interface LedgerRecipient {
  recipient: string;
  state: DeliveryState;
  sessionsPushed: number;
  lastReceipt?: {
    kind: string;
    by: string;
    session: string;
    node: string;
    at: number;
    channel?: Channel;
    outcome?: string;
    /** A result's summary on one line, at most 160 characters. */
    summary?: string;
  };
  /** When the handoff first entered the recipient model's context, in which session and how. */
  surfaced?: { session: string; node: string; at: number; path: string; via: string };
  /** The last wake typed into an idle session's terminal for it (not a receipt). */
  woken?: { at: number; how: string; terminal: string };
  /** No recipient ACK (or result) yet. */
  awaitingAck: boolean;
  failure?: string;
  chasedAt?: number;
  /** Chased and still silent a period later: escalated once, to whom, when, as which handoff. */
  escalated?: { to: string; at: number; messageId: string };
  overdue: boolean;
}

export interface LedgerEntry {
  id: string;
  /** This hub's order of arrival. */
  seq: number;
  from: string;
  thread: string;
  preview: string;
  sentAt: number;
  dueAt: number;
  requiresAck: boolean;
  recipients: LedgerRecipient[];
  overdue: boolean;
  deadLettered: boolean;
  resolved: boolean;
  /** On its sender's pending ledger: not done by every recipient, and not resolved. */
  pending: boolean;
  /** Some recipient has still to ACK it. */
  awaitingAck: boolean;
}

export interface Coverage {
  identity: string;
  addressed: number;
  acked: number;
  medianAckMs?: number;
  lastSeen?: number;
  liveSessions: number;
  unacked: number;
  /** Unacked mail and no live session: someone is waiting on an agent that is not there. */
  ghost: boolean;
  /** On another node (`name@node`): its sessions live there, so this hub cannot call it a ghost. */
  remote: boolean;
  /** A person at an editor window on this hub: live while a window with this identity was focused recently. */
  person?: PersonPresence;
}

/** What counts as a person being there: a window with the identity open and focused within `PRESENCE_WINDOW_MS`. */
export interface PersonPresence {
  live: boolean;
  /** Editor windows on this hub with this identity. */
  windows: number;
  /** When a window with this identity last had focus (now, while one has it). */
  lastFocusedAt?: number;
}

/** Focused within this long counts as there: five minutes of reading elsewhere is still "at the editor". */
export const PRESENCE_WINDOW_MS = 5 * 60_000;

/** A handoff in a person's inbox, as the editor lists it. */
export interface PersonInboxItem {
  id: string;
  from: string;
  thread: string;
  replyTo?: string;
  preview: string;
  sentAt: number;
  state: DeliveryState;
  unread: boolean;
  requiresAck: boolean;
  dueAt: number;
  /** An escalation: which handoff went unacknowledged, and by whom. */
  escalation?: { of: string; silent: string };
}

/** One person's inbox, newest first, in every snapshot: read in one window is read in all. */
export interface PersonView {
  identity: string;
  presence: PersonPresence;
  /** The one window of theirs that notifies of a new handoff: the one focused most recently. */
  notifier?: string;
  unread: number;
  inbox: PersonInboxItem[];
}

/** Where a handoff to remote recipients is: the send reply says it honestly. */
export type RelayOutcome =
  | { state: 'on_homeserver'; event_id: string; at: number }
  /** A linked repository's hub on this machine holds it (hub/link/): its hub pushes it. */
  | { state: 'in_their_hub'; repository: string; at: number }
  /** `repository`: waiting for a linked repository's hub, not for a homeserver. */
  | { state: 'in_outbox'; note: string; last_error?: string; repository?: string }
  | { state: 'refused'; reason: string };

/** An advisory `m.read` receipt: a Matrix *user* read up to this message (not a session's ACK). */
export interface AdvisoryRead {
  user: string;
  at: number;
}

export interface LinkStatus {
  transport: 'matrix';
  /** connecting: first contact; connected: syncing; retrying: the homeserver is unreachable;
   * refused: the homeserver refused the token or the room (the error says which). */
  state: 'connecting' | 'connected' | 'retrying' | 'refused' | 'stopped';
  homeserver: string;
  userId?: string;
  room?: string;
  error?: string;
  /** Outbox entries not yet accepted by the homeserver. */
  outbox: number;
  lastSyncAt?: number;
  /** By message id. m.read receipts are per Matrix user, not per session: advisory only. */
  advisoryReads: Record<string, AdvisoryRead[]>;
  /** Says the above in words, for the panel to show next to them. */
  advisoryReadsNote: string;
  /** Which Matrix account speaks for which node (G9): configured, this hub, or first announcement. */
  nodes?: { node: string; user: string; how: 'configured' | 'this hub' | 'announced'; signed: boolean }[];
  /** Room events not taken, by why (not allowed, forged node, refused node claim, malformed, …), since the link started. */
  dropped?: Record<string, number>;
  /** For the panel, in words: refused node claims, and accounts that speak for several nodes. */
  notices?: string[];
  /** The room's end-to-end encryption; absent for a plaintext room. */
  encryption?: EncryptionStatus;
}

/** An encrypted bus room as this hub's device sees it. */
export interface EncryptionStatus {
  /** on: this hub reads and writes the room with its device; failed: the room is encrypted but the
   * device could not be set up — nothing is sent or read until it is (`error` says why). */
  state: 'on' | 'failed';
  error?: string;
  device?: string;
  /** The device's Ed25519 key (base64), as its node's signed claim in the room names it. */
  deviceKey?: string;
  /** Devices of the room's allowed members: this hub's, verified (a node's key signed for it),
   * refused (a hub account's device no node signed for: no room keys, events dropped), or
   * unverified (a person's device: it gets the keys and is flagged). */
  devices: { user: string; device: string; trust: 'this hub' | 'verified' | 'refused' | 'unverified' }[];
  /** Room events whose keys have not arrived yet (kept and tried again after each sync). */
  waitingForKeys: number;
  /** Events given up on: their keys never came. */
  undecryptable: number;
  /** Size of the device's crypto store on disk. */
  storeBytes?: number;
}

export interface RecipientOutcome {
  identity: string;
  /** For a recipient on another node still `queued` here: `relayed` (on the homeserver, `event_id`),
   * `in_outbox`, or `failed` (refused); then its node's pushed / surfaced / ACK as receipts arrive. */
  state: Delivery['state'] | 'relayed' | 'in_outbox';
  /** Live sessions on this hub it was pushed to (0 for a recipient on another node: see state). */
  sessions: number;
  /** The homeserver's event that carries it (recipients on other nodes). */
  event_id?: string;
  /** When its model will see it, as far as its hooked sessions tell: now, next tool call, next turn, or only when it calls inbox. */
  seen_when: SeenWhen | 'on_another_node';
  /** Why only when it calls inbox, when the hub can tell: its live sessions' CLI version runs no Handoff hooks where it runs. */
  why?: string;
}

export interface SendResult {
  message_id: string;
  seq: number;
  thread: string;
  /** `pushed`: written to at least one live session here (not proof of reading); `relayed`: none
   * here, but on the homeserver for recipients on other nodes; `queued`: neither. */
  state: 'pushed' | 'relayed' | 'queued';
  recipients: RecipientOutcome[];
  duplicate?: { why: 'idempotency_key' | 'probable_duplicate' | 'resent'; note: string };
  /** Present when some recipients are on other nodes: whether the homeserver has it yet. */
  relay?: RelayOutcome;
}

export interface SessionInfo {
  /** sessionLabel of the key: the key itself is the session's secret. */
  label: string;
  identity: string;
  roles: string[];
  client: string;
  connectedAt: number;
  lastSeen: number;
}

export interface MessageView {
  message: Message;
  deliveries: Delivery[];
  settled: boolean;
  resolution?: Resolution;
  /** When the homeserver took it (recipients on other nodes). */
  relayed?: { eventId: string; at: number };
}

/** What a history search may ask a handoff's state to be: a recipient's delivery state, or open or settled. */
export const SEARCH_STATES = [
  'queued',
  'pushed',
  'surfaced',
  'read',
  'acked',
  'done',
  'stuck',
  'failed',
  'open',
  'settled',
] as const;

/** A history search: every field narrows it; times are ms since the epoch, `until` not included. */
export interface SearchQuery {
  text?: string;
  from?: string;
  to?: string;
  thread?: string;
  state?: (typeof SEARCH_STATES)[number];
  since?: number;
  until?: number;
  limit: number;
}

/** One line of `handoff export`: a handoff with its receipts and state; `archivedAt` for a settled one. */
export interface ExportLine extends MessageView {
  archivedAt?: number;
}

/** A page of an export, oldest settlement first; `next` asks for the page after it. */
export interface ExportPage {
  lines: ExportLine[];
  next?: string;
  /** On the last page of an export without `open`: the open handoffs in the range, not exported. */
  openLeftOut?: number;
  /** Handoffs of history this page went past because retention dropped their segment meanwhile. */
  removed?: number;
}

/** A store's retention (`handoff store retention`): what it keeps, what it removed, how large history is. */
export interface RetentionView {
  policy: { keepDays?: number; keepGiB?: number };
  dropped: { segments: number; handoffs: number; settledBefore: number };
  history: { segments: number; bytes: number; handoffs: number };
}

/** One message a history search found: `message_id` opens it with get_message. */
export interface SearchHit {
  message_id: string;
  from: string;
  recipients: string[];
  thread: string;
  sent_at: number;
  settled: boolean;
  /** Each recipient's delivery state. */
  states: Record<string, DeliveryState>;
  excerpt: string;
}

/** Past their SLA without an ACK, or dead-lettered and not resolved; `ids` oldest first, at most SNAPSHOT_CAP. */
export interface OverdueSummary {
  count: number;
  oldestSentAt?: number;
  ids: string[];
}

/** What a snapshot or a change says besides the message rows: small, bounded by identities and sessions. */
export interface BusSummary {
  now: number;
  store: { ok: boolean; dir: string; error?: string; archived: number };
  sessions: SessionInfo[];
  coverage: Coverage[];
  overdue: OverdueSummary;
  /** Open messages on the hub, and how many of them are pending. */
  openCount: number;
  pendingCount: number;
  /** Open messages some recipient has not ACKed yet (an ACKed one waiting for its result is not). */
  awaitingAckCount: number;
  /** Present when a transport to other nodes is attached. */
  link?: LinkStatus;
  /** This repository's short name and the repositories on this machine linked to it (absent from older hubs). */
  links?: LinksView;
  /** The people at editor windows on this hub, each with their inbox. */
  people: PersonView[];
  /** How idle agents are woken in their terminals: the most careful handoff.wakeIdleAgents of the windows on this hub (absent from older hubs). */
  wakeIdleAgents?: WakeMode;
}

/** How many rows a snapshot carries of each list; the counts say how many there are. */
export const SNAPSHOT_CAP = 200;
/** How many settled handoffs (read from history) the editor lists beside the open ones. */
export const SETTLED_CAP = 50;

export interface Snapshot extends BusSummary {
  node: string;
  workspace: string;
  /** The newest open messages, newest first (at most SNAPSHOT_CAP). */
  messages: LedgerEntry[];
  /** The oldest pending messages, oldest first (at most SNAPSHOT_CAP). */
  pending: LedgerEntry[];
  /** The handoffs settled last, read from history, newest sent first (a bounded window; absent from older hubs). */
  settled?: LedgerEntry[];
  /** Each guarantee this hub gives weaker than on Linux, as a sentence (docs/platforms.md); absent when none. */
  weaker?: string[];
}

/**
 * What changed since the previous notification: the rows of the messages that changed, keyed by
 * id, and the ids that are no longer open (settled and archived). A client applies it to the
 * snapshot it holds (client/liveSnapshot.ts).
 */
export interface SnapshotChange extends BusSummary {
  upserts: LedgerEntry[];
  removed: string[];
}

/** A receipt's answer: the delivery's state after it; `recorded: false` when it changed nothing. */
export interface ReceiptAnswer {
  message_id: string;
  state: DeliveryState | 'settled';
  recorded: boolean;
}

export interface InboxItem {
  message: Message;
  delivery: Delivery;
}

// Messages between the extension host and the Handoff sidebar webview (extension/webview/panel.ts). Types
// only: the webview imports nothing else from the host.
import type { DeliveryState } from './model';
import type { LinkView } from './link';
import type { LinkStatus } from './views';

export type PanelFilter = 'all' | 'overdue';
export type Tone = 'ok' | 'info' | 'warn' | 'error' | 'muted';

export interface RecipientView {
  identity: string;
  state: DeliveryState;
  /** e.g. "pushed · 2 sessions", "ACK · reviewer 14:03:12", "done · reviewer 14:05:40". */
  label: string;
  /** Longer text for the tooltip: who, which session, which node, when. */
  detail: string;
  icon: string;
  tone: Tone;
  overdue: boolean;
  /** A done / stuck / rejected result's summary, on one line (shown as text). */
  summary?: string;
}

export interface EventView {
  id: string;
  from: string;
  to: string[];
  thread: string;
  preview: string;
  sentAt: number;
  /** SLA deadline for an ACK; undefined when the message does not ask for one. */
  dueAt?: number;
  overdue: boolean;
  deadLettered: boolean;
  resolved: boolean;
  /** Some recipient has not ACKed yet (queued, pushed or read). */
  awaitingAck: boolean;
  /** Not settled: waiting for an ACK or a result, or dead-lettered (so chase and resolve make sense). */
  open: boolean;
  recipients: RecipientView[];
  /** Matrix m.read receipts: per Matrix user, advisory — never a recipient's receipt. */
  advisoryReads?: { label: string; note: string };
}

/** The Matrix link, for the panel's header. */
export interface MatrixView {
  state: LinkStatus['state'];
  icon: string;
  tone: Tone;
  /** "Matrix connected as @alice:example.org in !room:example.org" */
  headline: string;
  homeserver: string;
  userId?: string;
  room?: string;
  error?: string;
  outbox: number;
  outboxLabel: string;
  lastSyncAt?: number;
  lastSyncLabel: string;
  /** What m.read receipts are (and are not), in words. */
  advisoryReadsNote: string;
  /** Refused node claims, and Matrix accounts that speak for several nodes (they cannot be told apart). */
  notices: string[];
  /** Room events not taken, by why; absent when none. */
  droppedLabel?: string;
  /** Whether the room is end-to-end encrypted, and how its devices stand, in words. */
  encryption: { on: boolean; label: string; devices: string[] };
}

export interface SessionView {
  label: string;
  identity: string;
  client: string;
  roles: string[];
  connectedAt: number;
}

export interface CoverageView {
  identity: string;
  addressed: number;
  acked: number;
  /** "3/4 acked" */
  label: string;
  /** Tooltip: median ACK time, last seen. */
  detail: string;
  liveSessions: number;
  unacked: number;
  ghost: boolean;
  /** A person at an editor window on this hub: "at the editor" while focused recently, else "away". */
  person?: { live: boolean; label: string };
}

/** A handoff addressed to the person at this editor. */
export interface InboxRowView {
  id: string;
  from: string;
  /** "builder", or for an escalation "Escalation · bob silent" (the preview says the rest). */
  headline: string;
  preview: string;
  sentAt: number;
  state: DeliveryState;
  unread: boolean;
  /** "unread", "read", "ACKed · awaiting your result". */
  stateLabel: string;
  /** Not ACKed yet: the ACK action applies. */
  canAck: boolean;
  escalation?: { of: string; silent: string };
  /** From a repository linked to this one on the machine: its short name. */
  origin?: string;
  /** Tooltip: thread, reply_to, due time. */
  detail: string;
}

/** An agent of a linked repository, as its hub last said (untrusted text: drawn as text only). */
export interface LinkedAgentView {
  /** How agents here address it: `bob@frontend`. */
  address: string;
  /** Its name there: `bob`. */
  name: string;
  live: number;
  /** "2 live", "offline". */
  label: string;
}

/** A repository on this machine linked to this one (hub/link/), for the view's Linked Repositories. */
export interface LinkRowView {
  /** Its folder: the key, and what unlinking names. */
  root: string;
  /** Its short name, or its folder's name until its hub first answered. */
  name: string;
  state: LinkView['state'];
  /** Its hub answers now (linked, or waiting for it to link back). */
  reachable: boolean;
  /** "hub reachable", "hub not running", "waiting for it to link back", … */
  stateLabel: string;
  icon: string;
  tone: Tone;
  /** Handoffs and receipts for it in this hub's outbox. */
  queued: number;
  queuedLabel: string;
  agents: LinkedAgentView[];
  /** Tooltip: folder, state and why, the key's fingerprint, when linked. */
  detail: string;
  canUnlink: boolean;
}

/** What a person can do with a handoff in their inbox, in menu order. */
export const INBOX_ACTS = ['open', 'ack', 'reply', 'done', 'stuck', 'rejected'] as const;
export type InboxAct = (typeof INBOX_ACTS)[number];

export interface PanelModel {
  /** The person at this editor (handoff.identity) and their handoffs, newest first. */
  inbox: { identity: string; unread: number; rows: InboxRowView[] };
  /** `detail` in a person's words; `tooltip` has the hub's node and pid. */
  hub: { state: 'starting' | 'running' | 'down'; detail: string; tooltip?: string; node?: string };
  /** Absent when Matrix is off. */
  matrix?: MatrixView;
  store?: { ok: boolean; error?: string };
  filter: PanelFilter;
  /** The hub's clock at the snapshot; the view corrects countdowns by its own clock's offset. */
  now: number;
  overdueCount: number;
  /** Newest first, already filtered. */
  events: EventView[];
  /** Oldest first: what is not settled yet (waiting for an ACK or a result). */
  pending: EventView[];
  /** Of those: how many some recipient has not ACKed, and how many are ACKed and wait for a result. */
  waiting: { ack: number; result: number };
  sessions: SessionView[];
  coverage: CoverageView[];
  ghosts: CoverageView[];
  /** This repository's short name on the machine, and the repositories linked to it (none: the section is hidden). */
  links: { name: string; rows: LinkRowView[] };
}

/** A keyed list as the host posts it: every key in order, and only the rows that changed since the last post. */
export interface ListPatch<T> {
  order: string[];
  changed: T[];
}

/** What the host posts: the model's small parts whole, its lists keyed (rows by message id). */
export interface PanelUpdate extends Omit<
  PanelModel,
  'inbox' | 'events' | 'pending' | 'sessions' | 'coverage' | 'ghosts' | 'links'
> {
  links: { name: string; rows: ListPatch<LinkRowView> };
  inbox: { identity: string; unread: number; rows: ListPatch<InboxRowView> };
  events: ListPatch<EventView>;
  pending: ListPatch<EventView>;
  sessions: ListPatch<SessionView>;
  coverage: ListPatch<CoverageView>;
  ghostCount: number;
}

export type HostToPanel =
  { type: 'update'; update: PanelUpdate } | { type: 'searchResults'; results: SearchResultsView };

export type PanelToHost =
  | { type: 'ready' }
  | { type: 'open'; id: string }
  | { type: 'copyId'; id: string }
  | { type: 'chase'; id: string }
  | { type: 'resolve'; id: string }
  | { type: 'filter'; filter: PanelFilter }
  | { type: 'inbox'; act: InboxAct; id: string }
  | { type: 'search'; text: string; seq: number }
  | { type: 'connect' }
  /** Unlink the repository at `root` (the host asks the person to confirm first). */
  | { type: 'unlink'; root: string };

// ---- the search box (webview/search.ts, client/panel/search.ts) ----

/** What the search box may hold: words, and from: to: thread: state: filters. */
export const SEARCH_TEXT_MAX = 500;
/** How many hits a search from the view lists. */
export const SEARCH_LIMIT = 50;

/** One handoff a search found, open or settled (read back from history). */
export interface SearchHitView {
  id: string;
  from: string;
  to: string[];
  thread: string;
  sentAt: number;
  excerpt: string;
  settled: boolean;
  /** "settled · reviewer done", "bob pushed". */
  stateLabel: string;
  icon: string;
  tone: Tone;
}

/** The answer to the box's search `seq` (an older one arriving late is dropped). */
export interface SearchResultsView {
  seq: number;
  hits: SearchHitView[];
  /** "12 handoffs, newest first"; or why there are none. */
  summary: string;
  /** The query could not run (a bad filter, the hub down): said instead of hits. */
  error?: string;
}

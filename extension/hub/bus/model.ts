// The bus's state: open messages with their deliveries, identities, coverage, the relay outbox, and
// the journal's events. Plain data only — serialised into the journal and the checkpoint as it is.
// The message and delivery types themselves are protocol (extension/protocol/model.ts).
import { dict } from './dict';
import type { Delivery, Message, Push, Receipt, Resolution, SurfacePath, Surfacing, Wake } from '../../protocol/model';
export type {
  Channel,
  PushKind,
  ReceiptKind,
  Outcome,
  SurfacePath,
  DeliveryState,
  Attachment,
  Message,
  Origin,
  Escalation,
  Stamp,
  Receipt,
  Push,
  Surfacing,
  Wake,
  Delivery,
  Resolution,
} from '../../protocol/model';

export interface IdentityRecord {
  name: string;
  firstSeen: number;
  lastSeen: number;
  roles: string[];
}

/** Running per-identity coverage counters; they survive archiving. */
export interface CoverageCounters {
  addressed: number;
  acked: number;
  /** The most recent send→ack latencies (ms), bounded, for the median. */
  ackLatencies: number[];
}

/** A message as the hot set holds it: the body as text, or where the checkpoint holds it (bus/body.ts). */
export type StoredMessage = Omit<Message, 'body'> & { body: string | number };

export interface HotMessage {
  message: StoredMessage;
  deliveries: Record<string, Delivery>;
  resolution?: Resolution;
  /** Set once the homeserver accepted the message's Matrix event (remote recipients only). */
  relayed?: { eventId: string; at: number };
}

/**
 * What goes to other nodes over Matrix. Remote names are `name@node`; a local name has no `@`.
 * A message to remote recipients, or a local recipient's receipt for a remote sender's message.
 */
export type OutboxItem =
  | { kind: 'message'; message: Message }
  | { kind: 'receipt'; messageId: string; sender: string; refEventId?: string; receipt: Receipt }
  /** A local recipient's first push or first surfacing of a remote sender's message: the sender's ledger shows it. */
  | {
      kind: 'progress';
      messageId: string;
      sender: string;
      refEventId?: string;
      step: 'pushed' | 'surfaced';
      recipient: string;
      session: string;
      node: string;
      at: number;
      path?: SurfacePath;
      via?: string;
    };

/** Persisted with its txnId before the first send, so every retry (even after a crash) reuses it. */
export interface OutboxEntry {
  txnId: string;
  /** Send order: the outbox sends strictly in this order (FIFO per sender→recipient). */
  order: number;
  queuedAt: number;
  item: OutboxItem;
}

export interface RelayState {
  outbox: Record<string, OutboxEntry>;
  /** Entries ever queued: the next entry's order. */
  queued: number;
  /** The homeserver's sync position (next_batch) after the last ingested sync. */
  since?: string;
  /** Per room, the last timeline event ingested: where a gap backfill stops. */
  rooms: Record<string, { lastEventId: string }>;
  /** Node → the Matrix account that first announced it: only that account speaks for the node. */
  nodes?: Record<string, { user: string; at: number; key?: string }>;
  /** Batch txnId → its members' txnIds, fixed before the first PUT so every retry sends the same event. */
  batches?: Record<string, string[]>;
}

export interface BusState {
  node: string;
  seq: number;
  /** Unsettled messages; settled ones move to the archive at checkpoints. */
  hot: Record<string, HotMessage>;
  identities: Record<string, IdentityRecord>;
  coverage: Record<string, CoverageCounters>;
  /** `${from}\n${key}` → message id, pruned after the idempotency window. */
  idempotency: Record<string, { id: string; at: number }>;
  /** Only once Matrix has been used. */
  relay?: RelayState;
}

export type BusEvent =
  | { type: 'sent'; message: Message }
  | { type: 'pushed'; id: string; recipient: string; push: Push }
  /**
   * About to be pushed to the recipient's live sessions: journaled with the message (or before a
   * replay's first push), so a crash before the push record lands cannot make the next push look
   * like the first (G2: the next one is flagged replayed).
   */
  | { type: 'offered'; id: string; recipient: string; at: number }
  | { type: 'receipt'; id: string; recipient: string; receipt: Receipt }
  | { type: 'surfaced'; id: string; recipient: string; surfacing: Surfacing }
  | { type: 'woken'; id: string; recipient: string; wake: Wake }
  | { type: 'failed'; id: string; recipient: string; reason: string; at: number }
  | { type: 'chased'; id: string; recipient: string; at: number }
  /** Chased and still silent: escalated to `to` as handoff `messageId` (sent in the same record). */
  | { type: 'escalated'; id: string; recipient: string; to: string; at: number; messageId: string }
  | { type: 'resolved'; id: string; resolution: Resolution }
  | { type: 'identity'; name: string; at: number; roles: string[] }
  | { type: 'outboxed'; txnId: string; at: number; item: OutboxItem }
  | { type: 'relayed'; txnId: string; eventId: string; at: number }
  | { type: 'relay-failed'; txnId: string; reason: string; at: number }
  | { type: 'synced'; since: string; room?: string; lastEventId?: string }
  /** A node's account (and Ed25519 key) from its first announcement; a later one may only add the key. */
  | { type: 'node-bound'; node: string; user: string; at: number; key?: string }
  | { type: 'batched'; txnId: string; members: string[] }
  /** The homeserver refused the batch for good: its members go out one by one instead. */
  | { type: 'unbatched'; txnId: string };

export function emptyState(node: string): BusState {
  return { node, seq: 0, hot: dict(), identities: dict(), coverage: dict(), idempotency: dict() };
}

/** The messages an event changes (none for identity, outbox and sync events). */
export function messageIdOf(e: BusEvent): string | undefined {
  if (e.type === 'sent') return e.message.id;
  return 'id' in e ? e.id : undefined;
}

/** Resend keys live beside senders' own idempotency keys, in a space of their own no tool input can name. */
export const RESEND_PREFIX = '\u0000resend:';

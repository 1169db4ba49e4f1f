// The control protocol between the hub and its editor-side clients (the extension, over the
// vscode-languageclient connection; the `handoff` CLI, over the hub socket). Methods are named
// `handoff/verb`; both sides import these types and nothing else from each other.
import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { SendResult, Snapshot } from '../hub/hub';
import type { Delivery, Message, Outcome } from '../hub/bus/model';

import type { RemoteStatus } from '../hub/remote';

export type { SendResult, Snapshot, RemoteStatus };
export type { Coverage, LedgerEntry, LedgerRecipient } from '../hub/bus/ledger';
export type { Delivery, DeliveryState, Message } from '../hub/bus/model';

export interface SendParams {
  /** The sending identity, e.g. the person at the editor. */
  as: string;
  to: string[];
  body: string;
  thread?: string;
  replyTo?: string;
  requiresAck?: boolean;
  slaSeconds?: number;
  idempotencyKey?: string;
  insist?: boolean;
}

export interface InboxParams {
  identity: string;
  unreadOnly?: boolean;
  limit?: number;
}

export interface InboxItem {
  message: Message;
  delivery: Delivery;
}

export interface MessageParams {
  id: string;
}

export interface ReceiptParams {
  as: string;
  id: string;
  kind: 'read' | 'ack' | 'result';
  outcome?: Outcome;
  summary?: string;
}

export interface ActionParams {
  id: string;
  /** Who asked: the person at the editor or the CLI user. */
  by: string;
  note?: string;
}

export namespace SnapshotRequest {
  export const method = 'handoff/snapshot';
  export const type = new RequestType0<Snapshot, void>(method);
}

export namespace SendRequest {
  export const method = 'handoff/send';
  export const type = new RequestType<SendParams, SendResult, void>(method);
}

export namespace InboxRequest {
  export const method = 'handoff/inbox';
  export const type = new RequestType<InboxParams, InboxItem[], void>(method);
}

export namespace MessageRequest {
  export const method = 'handoff/message';
  export const type = new RequestType<MessageParams, { message: Message; deliveries: Delivery[]; settled: boolean } | null, void>(method);
}

export namespace ReceiptRequest {
  export const method = 'handoff/receipt';
  export const type = new RequestType<ReceiptParams, { message_id: string; state: string; recorded: boolean }, void>(method);
}

export namespace ChaseRequest {
  export const method = 'handoff/chase';
  export const type = new RequestType<ActionParams, { pushed: number }, void>(method);
}

export namespace ResolveRequest {
  export const method = 'handoff/resolve';
  export const type = new RequestType<ActionParams, void, void>(method);
}

/**
 * Connects this hub to Matrix now (replacing any current link). The extension keeps the access
 * token in SecretStorage and passes it here or, at hub start, in the HANDOFF_MATRIX_TOKEN env var;
 * the hub never writes it anywhere. The reply is the link's status; later states arrive in
 * snapshot.remote.
 */
export interface MatrixConnectParams {
  homeserver: string;
  accessToken: string;
  /** `!id:server`, or `#alias:server` (created invite-only, allowed senders invited, if missing). */
  room: string;
  /** Matrix user ids whose handoffs are accepted; the hub's own account always is. */
  allowedSenders?: string[];
}

export namespace MatrixConnectRequest {
  export const method = 'handoff/matrix/connect';
  export const type = new RequestType<MatrixConnectParams, RemoteStatus, void>(method);
}

/** Stops the Matrix link; the outbox stays persisted and is sent on the next connect. */
export namespace MatrixDisconnectRequest {
  export const method = 'handoff/matrix/disconnect';
  export const type = new RequestType0<void, void>(method);
}

/** Sent (debounced) whenever the bus changes; carries the new snapshot. */
export namespace ChangedNotification {
  export const method = 'handoff/changed';
  export const type = new NotificationType<Snapshot>(method);
}

/** Error codes on control requests: BusError codes travel in `data.code`. */
export const BUS_ERROR = -32001;

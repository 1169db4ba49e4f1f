// The control protocol between the hub and its editor-side clients (the extension, over the
// vscode-languageclient connection; the `handoff` CLI, over the hub socket). Each request is one
// object: its method, its params schema (checked by the hub at run time: the socket is open to
// any local process of the user) and its result type. Params types are inferred from the schemas,
// so what both ends compile against is exactly what the hub accepts.
import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import { z } from 'zod';
import { IDENTITY_PATTERN, MESSAGE_ID_PATTERN } from './names';
import type { InboxItem, MessageView, ReceiptAnswer, RemoteStatus, SendResult, Snapshot } from './views';

const identity = z.string().regex(IDENTITY_PATTERN, "must be an identity name: letters, digits, '.', '_' or '-'");
const messageId = z.string().regex(MESSAGE_ID_PATTERN, 'must be a 26-character message id');
/** What a recipient's address may be: a name, `role:NAME` or `*`; resolved and checked by the bus. */
const address = z.string().min(1).max(200);

const sendParams = z.object({
  /** The sending identity, e.g. the person at the editor. */
  as: identity,
  to: z.array(address).min(1).max(64),
  body: z.string().max(1 << 20), // the bus refuses past its own, smaller limit with the exact size
  thread: z.string().max(200).optional(),
  replyTo: messageId.optional(),
  requiresAck: z.boolean().optional(),
  slaSeconds: z.number().int().min(1).max(7 * 86400).optional(),
  idempotencyKey: z.string().min(1).max(200).optional(),
  insist: z.boolean().optional(),
  /** Whom to escalate to if it stays unacknowledged past its chase; default: this hub's person. */
  escalateTo: identity.optional(),
}).strict();

/** An editor window: who sits at it, whether it has focus, whom their unanswered handoffs escalate to. */
const presenceParams = z.object({
  identity,
  roles: z.array(z.string().regex(IDENTITY_PATTERN, 'must be a role name')).max(32).optional(),
  focused: z.boolean(),
  escalateTo: identity.optional(),
}).strict();

const inboxParams = z.object({
  identity,
  unreadOnly: z.boolean().optional(),
  limit: z.number().int().min(1).max(200).optional(),
}).strict();

const messageParams = z.object({ id: messageId }).strict();

const receiptParams = z.object({
  as: identity,
  id: messageId,
  kind: z.enum(['read', 'ack', 'result']),
  outcome: z.enum(['done', 'stuck', 'rejected']).optional(),
  summary: z.string().min(1).max(8192).optional(),
}).strict().refine((p) => (p.kind === 'result') === (p.outcome !== undefined), { message: 'a result needs an outcome (done, stuck or rejected); read and ack take none' });

const actionParams = z.object({
  id: messageId,
  /** Who asked: the person at the editor or the CLI user. */
  by: identity,
  note: z.string().max(2000).optional(),
}).strict();

/**
 * Connects this hub to Matrix now (replacing any current link). The extension keeps the access
 * token in SecretStorage and passes it here or, at hub start, in the HANDOFF_MATRIX_TOKEN env var;
 * the hub never writes it anywhere. The hub checks these further (matrix/config.ts) and says which
 * field is wrong without echoing the token.
 */
const matrixConnectParams = z.object({
  homeserver: z.string().min(1).max(2048),
  accessToken: z.string().min(1).max(4096),
  /** `!id:server`, or `#alias:server` (created invite-only, allowed senders invited, if missing). */
  room: z.string().min(1).max(512),
  /** Matrix user ids whose handoffs are accepted; the hub's own account always is. */
  allowedSenders: z.array(z.string().min(1).max(255)).max(1000).optional(),
}).strict();

export type SendParams = z.infer<typeof sendParams>;
export type InboxParams = z.infer<typeof inboxParams>;
export type PresenceParams = z.infer<typeof presenceParams>;
export type MessageParams = z.infer<typeof messageParams>;
export type ReceiptParams = z.infer<typeof receiptParams>;
export type ActionParams = z.infer<typeof actionParams>;
export type MatrixConnectParams = z.infer<typeof matrixConnectParams>;

/** A request whose params the hub validates against `params` before any handler sees them. */
export interface ControlRequest<P, R> {
  method: string;
  type: RequestType<P, R, void>;
  params: z.ZodType<P>;
}

function request<P, R>(method: string, params: z.ZodType<P>): ControlRequest<P, R> {
  return { method, type: new RequestType<P, R, void>(method), params };
}

export const SendRequest = request<SendParams, SendResult>('handoff/send', sendParams);
export const InboxRequest = request<InboxParams, InboxItem[]>('handoff/inbox', inboxParams);
export const MessageRequest = request<MessageParams, MessageView | null>('handoff/message', messageParams);
export const ReceiptRequest = request<ReceiptParams, ReceiptAnswer>('handoff/receipt', receiptParams);
/** The person at this window (one per control connection; dropped when it closes): presence and escalation target. */
export const PresenceRequest = request<PresenceParams, void>('handoff/presence', presenceParams);
/** Pushes again, flagged as a chase, to every live session of each unacked recipient. */
export const ChaseRequest = request<ActionParams, { pushed: number }>('handoff/chase', actionParams);
/** A person closes an open handoff (overdue or dead-lettered) with a note. */
export const ResolveRequest = request<ActionParams, void>('handoff/resolve', actionParams);
/** The reply is the link's status; later states arrive in snapshot.remote. */
export const MatrixConnectRequest = request<MatrixConnectParams, RemoteStatus>('handoff/matrix/connect', matrixConnectParams);

/** Parameterless requests: nothing to validate. */
export const SnapshotRequest = { method: 'handoff/snapshot', type: new RequestType0<Snapshot, void>('handoff/snapshot') };
/** Stops the Matrix link; the outbox stays persisted and is sent on the next connect. */
export const MatrixDisconnectRequest = { method: 'handoff/matrix/disconnect', type: new RequestType0<void, void>('handoff/matrix/disconnect') };

/** Sent (debounced) whenever the bus changes; carries the new snapshot. */
export const ChangedNotification = { method: 'handoff/changed', type: new NotificationType<Snapshot>('handoff/changed') };

/** Error codes on control requests: BusError codes travel in `data.code`. */
export const BUS_ERROR = -32001;

/** The params, or a message naming each bad field. */
export function checkParams<P>(req: ControlRequest<P, unknown>, params: unknown): P | string {
  const r = req.params.safeParse(params);
  if (r.success) return r.data;
  return `${req.method}: ${r.error.issues.map((i) => `${i.path.join('.') || 'params'} ${i.message}`).join('; ')}`;
}

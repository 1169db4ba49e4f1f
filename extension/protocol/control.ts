// The control protocol between the hub and its editor-side clients (the extension, over the
// vscode-languageclient connection; the `handoff` CLI, over the hub socket). Each request is one
// typed object naming its method, params and result; both ends use the same objects. The params
// types are inferred from the schemas the hub checks them against (controlSchemas.ts), so what
// both ends compile against is exactly what the hub accepts. Nothing here runs anything heavy:
// the editor's bundle imports it.
import type { z } from 'zod';
import type { PARAMS, ValidatedMethod } from './controlSchemas';
import type {
  InboxItem,
  MessageView,
  ReceiptAnswer,
  LinkStatus,
  RetentionView,
  ExportPage,
  SearchHit,
  SendResult,
  Snapshot,
  SnapshotChange,
} from './views';
import type { LinksView } from './link';
import type { TerminalWakeAnswer, TerminalWakeParams, WakeAskAnswer, WakeAskParams } from './wake';

/** A validated method's params: exactly what its schema produces. */
export type Params<M extends ValidatedMethod> = z.infer<(typeof PARAMS)[M]>;

export type SendParams = Params<'handoff/send'>;
export type InboxParams = Params<'handoff/inbox'>;
export type PresenceParams = Params<'handoff/presence'>;
export type MessageParams = Params<'handoff/message'>;
export type ReceiptParams = Params<'handoff/receipt'>;
export type ActionParams = Params<'handoff/chase'>;
export type MatrixConnectParams = Params<'handoff/matrix/connect'>;

/** A request; its params (`void`: none) and result types travel with it, for both ends. */
export interface ControlRequest<P, R, M extends string = string> {
  readonly method: M;
  /** Never set: carries the types. */
  readonly types?: (params: P) => R;
}

/** A request whose params the hub validates against its method's schema. */
export type ValidatedRequest<M extends ValidatedMethod, R> = ControlRequest<Params<M>, R, M>;

/** `validated<R>()('handoff/x')`: the params type comes from the method's schema. */
const validated =
  <R>() =>
  <M extends ValidatedMethod>(method: M): ValidatedRequest<M, R> => ({ method });
const request = <P, R, M extends string>(method: M): ControlRequest<P, R, M> => ({ method });

export const SendRequest = validated<SendResult>()('handoff/send');
export const InboxRequest = validated<InboxItem[]>()('handoff/inbox');
export const MessageRequest = validated<MessageView | null>()('handoff/message');
export const ReceiptRequest = validated<ReceiptAnswer>()('handoff/receipt');
/** Open and settled handoffs that answer a query, newest first (store/history.ts). */
export const SearchRequest = validated<SearchHit[]>()('handoff/search');
/** A page of history for keeping elsewhere (hub/requests/exporting.ts); ask again with `after: next` until there is none. */
export const ExportRequest = validated<ExportPage>()('handoff/export');
/** The store's retention; with `set`, replaced (durably) and run at once (store/retention.ts). */
export const RetentionRequest = validated<RetentionView>()('handoff/retention');
/** Pushes again, flagged as a chase, to every live session of each unacked recipient. */
export const ChaseRequest = validated<{ pushed: number }>()('handoff/chase');
/** A person closes an open handoff (overdue or dead-lettered) with a note. */
export const ResolveRequest = validated<void>()('handoff/resolve');
/**
 * Connects this hub to Matrix now (replacing any current link). The extension keeps the access
 * token in SecretStorage and passes it here (or, at hub start, in HANDOFF_MATRIX_TOKEN); the hub
 * never writes it anywhere. The reply is the link's status; later states arrive in changes.
 */
export const MatrixConnectRequest = validated<LinkStatus>()('handoff/matrix/connect');
/** This repository's links to others on this machine (hub/link/): link, unlink, name, or read them. */
export const LinksRequest = validated<LinksView>()('handoff/links');
/**
 * The person at this window (one per control connection; dropped when it closes): presence and
 * escalation target. The reply names the window, so it can tell whether it is the one that notifies.
 */
export const PresenceRequest = validated<{ window: string }>()('handoff/presence');

/** Parameterless requests: nothing to validate. */
export const SnapshotRequest = request<void, Snapshot, 'handoff/snapshot'>('handoff/snapshot');
/** Stops the Matrix link; the outbox stays persisted and is sent on the next connect. */
export const MatrixDisconnectRequest = request<void, void, 'handoff/matrix/disconnect'>('handoff/matrix/disconnect');

/**
 * Hub → window: type a wake into the integrated terminal that runs this idle agent, if the person
 * is not at it (protocol/wake.ts). Sent to each window that reported presence, until one woke it.
 */
export const TerminalWakeRequest = request<TerminalWakeParams, TerminalWakeAnswer, 'handoff/wakeTerminal'>(
  'handoff/wakeTerminal',
);

/**
 * Hub → the person's most recently focused window, when a window says "ask": may the hub wake this
 * idle agent now? Answered when the person chooses (a dismissed question is "no").
 */
export const WakeAskRequest = request<WakeAskParams, WakeAskAnswer, 'handoff/askToWake'>('handoff/askToWake');

/** Sent (debounced) whenever the bus changes: what changed, keyed by message id (not the whole snapshot). */
export const ChangedNotification: { readonly method: 'handoff/changed'; readonly types?: (c: SnapshotChange) => void } =
  { method: 'handoff/changed' };

/** Error codes on control requests: BusError codes travel in `data.code`. */
export const BUS_ERROR = -32001;

/** What sends control requests: a vscode-jsonrpc connection or the editor's language client. */
export interface RequestSender {
  sendRequest<R>(method: string, params?: unknown): Promise<R>;
}

/** Sends a request with exactly its params type, and answers with exactly its result type. */
export function call<P, R>(
  to: RequestSender,
  req: ControlRequest<P, R>,
  ...params: P extends void ? [] : [P]
): Promise<R> {
  return params.length ? to.sendRequest<R>(req.method, params[0]) : to.sendRequest<R>(req.method);
}

/** What receives control notifications. */
export interface NotificationReceiver {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- matches both vscode-jsonrpc and languageclient overloads
  onNotification(method: string, handler: (...params: any[]) => void): unknown;
}

/** Listens for a notification with exactly its params type. */
export function onNotice<P>(
  from: NotificationReceiver,
  n: { readonly method: string; readonly types?: (p: P) => void },
  handler: (p: P) => void,
): void {
  from.onNotification(n.method, handler);
}

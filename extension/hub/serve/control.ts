// Serves the control protocol (protocol/control.ts) on a JSON-RPC connection. Which one says what
// it may do (docs/threat-model.md): an editor window of this hub (`editor`: its stdio, or a socket
// connection with the hub's editor key) writes the person's receipts and links Matrix; the socket's
// other control connections (`cli`) read, and send only as an identity no agent session holds.
import { ResponseError } from 'vscode-jsonrpc';
import {
  BUS_ERROR,
  ChangedNotification,
  ChaseRequest,
  InboxRequest,
  LinksRequest,
  MatrixConnectRequest,
  MatrixDisconnectRequest,
  MessageRequest,
  RetentionRequest,
  ExportRequest,
  SearchRequest,
  PresenceRequest,
  ReceiptRequest,
  ResolveRequest,
  SendRequest,
  SnapshotRequest,
  TerminalWakeRequest,
  WakeAskRequest,
  type Params,
  type ValidatedRequest,
} from '../../protocol/control';
import { checkParams, type ValidatedMethod } from '../../protocol/controlSchemas';
import { BusError } from '../bus/errors';
import type { Channel } from '../bus/model';
import type { Hub } from '../hub';
import { matrixConfig, MatrixConfigError } from '../matrix/config';
import { startMatrix } from '../matrix/load';
import { labelledView } from '../presence/labelled';
import { workspaceOf } from '../../shared/paths';

/** What both a vscode-languageserver Connection and a vscode-jsonrpc MessageConnection offer. */
interface Connection {
  onRequest(method: string, handler: (params: unknown) => unknown): unknown;
  sendNotification(method: string, params?: unknown): unknown;
  sendRequest<R>(method: string, params?: unknown): Promise<R>;
}

function asResponseError(e: unknown): never {
  if (e instanceof BusError) throw new ResponseError(BUS_ERROR, e.message, { code: e.code, ...e.details });
  throw e;
}

async function guard<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (e) {
    return asResponseError(e);
  }
}

/** Bad Matrix settings are the caller's input error (the message never holds the token). */
function asInvalidInput<T>(work: () => T): T {
  try {
    return work();
  } catch (e) {
    if (e instanceof MatrixConfigError) throw new BusError('invalid_input', e.message);
    throw e;
  }
}

/** A socket connection may not speak for an identity with a live agent session: that session speaks for it. */
function mayCliSendAs(hub: Hub, identity: string): void {
  if (hub.sessions.count(identity) === 0) return;
  throw new BusError(
    'not_your_channel',
    `${identity} has a live agent session: a handoff in its name comes only from that session. Nothing was sent. Send as yourself instead (handoff send --as YOUR_NAME; the default is your user name), or from the editor.`,
  );
}

/** The editor's acts; `what` says which, and that nothing happened. */
function editorOnly(channel: Extract<Channel, 'editor' | 'cli'>, what: string): void {
  if (channel === 'editor') return;
  throw new BusError(
    'not_your_channel',
    `${what} is the editor's act: from the window that runs this hub, or a window of the same VS Code that holds its editor key. This is the socket's control channel (the CLI, or a window of a hub started outside the editor). Nothing changed.`,
  );
}

/** Registers the handlers; returns a function that stops change notifications. */
export function serveControl(
  hub: Hub,
  connection: Connection,
  channel: Extract<Channel, 'editor' | 'cli'>,
  debounceMs = 100,
): () => void {
  const controlSession = `control-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  /** Validates the params against the request's schema before the handler sees them. */
  const handle = <M extends ValidatedMethod, R>(
    req: ValidatedRequest<M, R>,
    handler: (p: Params<M>) => R | Promise<R>,
  ) =>
    connection.onRequest(req.method, (raw) =>
      guard(() => {
        const checked = checkParams(req.method, raw);
        if (!checked.ok) throw new BusError('invalid_input', checked.why);
        return handler(checked.params as Params<M>); // what the method's schema produced
      }),
    );
  connection.onRequest(SnapshotRequest.method, () => hub.fullSnapshot());
  handle(SendRequest, async (p) => {
    // `handoff send` as you: named as this hub's editor windows name their person, when one does.
    const people = hub.people.identities();
    const as = channel === 'cli' && p.asPerson && people.length === 1 ? people[0] : p.as;
    if (channel === 'cli') mayCliSendAs(hub, as);
    const person = channel === 'editor' || p.asPerson === true;
    const caller = { identity: as, session: controlSession, node: hub.node, channel, person };
    await hub.remember(caller.identity);
    return hub.send(caller, {
      to: p.to,
      body: p.body,
      thread: p.thread,
      replyTo: p.replyTo,
      requiresAck: p.requiresAck,
      slaMs: p.slaSeconds ? p.slaSeconds * 1000 : undefined,
      idempotencyKey: p.idempotencyKey,
      insist: p.insist,
      escalateTo: p.escalateTo,
    });
  });
  // The window is this connection: its receipts carry controlSession, its presence ends with it.
  handle(PresenceRequest, async (p) => {
    await hub.roster.reportWindow(controlSession, {
      identity: p.identity,
      roles: p.roles,
      focused: p.focused,
      escalateTo: p.escalateTo,
      wakeIdleAgents: p.wakeIdleAgents,
      // Only an editor window vouches for its extension host: a CLI could name any process.
      extensionHost: channel === 'editor' ? p.extensionHost : undefined,
    });
    // An editor window can be asked to wake an agent in one of its terminals; its answer is
    // journaled as the wake, so a connection without the editor key is not asked.
    if (channel === 'editor')
      hub.editorTerminals.add(controlSession, {
        wake: (w) => connection.sendRequest(TerminalWakeRequest.method, w),
        askPerson: async (q) =>
          (await connection.sendRequest<{ wake?: unknown } | null>(WakeAskRequest.method, q))?.wake === true,
      });
    return { window: controlSession };
  });
  handle(InboxRequest, (p) => hub.inbox(p.identity, p));
  handle(SearchRequest, ({ as, ...q }) => hub.search(q, as));
  handle(RetentionRequest, (p) => hub.retention(p.set));
  handle(ExportRequest, ({ as, ...q }) => hub.export(q, as));
  handle(MessageRequest, async (p) => {
    const view = await hub.lookup(p.id);
    return view ? labelledView(view) : null;
  });
  handle(ReceiptRequest, (p) => {
    if (channel !== 'editor') {
      throw new BusError(
        'not_your_channel',
        `A ${p.kind} receipt for ${p.as} comes only from ${p.as}'s own channel: an agent's from its MCP session, the person's from an editor window of this hub (the one that runs it, or one holding its editor key). This is the socket's control channel (the CLI, or a window without the key): it may read and send, not write receipts. Nothing was recorded.`,
      );
    }
    return hub.receipt(
      { identity: p.as, session: controlSession, node: hub.node, channel },
      p.id,
      p.kind,
      p.outcome,
      p.summary,
    );
  });
  handle(ChaseRequest, (p) => hub.chase(p.id, p.by));
  // Closing a handoff settles it as a receipt would: the person's act, from the editor only.
  handle(ResolveRequest, (p) => {
    if (channel !== 'editor')
      throw new BusError(
        'not_your_channel',
        "Marking a handoff resolved is the person's act, from an editor window of this hub (the one that runs it, or one holding its editor key); this is the socket's control channel. Nothing changed.",
      );
    return hub.resolve(p.id, p.by, p.note);
  });
  // Linking is the user's act on both sides (CLI or editor); nothing flows until both have.
  handle(LinksRequest, async (p) => {
    if (p.name !== undefined) await hub.links.rename(p.name);
    if (p.unlink !== undefined) await hub.links.unlink(workspaceOf(p.unlink));
    if (p.link !== undefined) await hub.links.link(workspaceOf(p.link));
    return hub.links.view();
  });
  const dropRemote = async () => {
    await hub.link?.close();
    hub.setLink(undefined);
  };
  // Which homeserver and room the bus speaks in is the editor's to say: any local process could
  // otherwise relink the hub to a room it controls.
  handle(MatrixConnectRequest, async (p) => {
    editorOnly(channel, 'Connecting this hub to Matrix');
    const config = asInvalidInput(() => matrixConfig(p, MatrixConnectRequest.method));
    await dropRemote();
    return asInvalidInput(() => startMatrix(hub, config, hub.options.log ?? (() => undefined))).status();
  });
  connection.onRequest(MatrixDisconnectRequest.method, () =>
    guard(() => {
      editorOnly(channel, 'Disconnecting this hub from Matrix');
      return dropRemote();
    }),
  );

  // Changes are gathered by message id while the debounce runs, then sent as one change.
  let timer: NodeJS.Timeout | undefined;
  const touched = new Set<string>();
  let since = hub.now();
  const stop = hub.onChanged((ids) => {
    for (const id of ids) touched.add(id);
    timer ??= setTimeout(() => {
      timer = undefined;
      const change = hub.changeOf(touched, since);
      since = change.now;
      touched.clear();
      void Promise.resolve(connection.sendNotification(ChangedNotification.method, change)).catch(() => undefined);
    }, debounceMs);
  });
  return () => {
    clearTimeout(timer);
    stop();
    hub.roster.dropWindow(controlSession);
    hub.editorTerminals.drop(controlSession);
  };
}

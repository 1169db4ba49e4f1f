// One agent connection: an SDK McpServer of its own over the socket, bound to one session.
// A session is live — listed, counted, pushed to — only from its `initialized` on, and only while
// it answers heartbeats; a connection that does not finish the handshake in time is closed. It
// leaves when the socket closes or a heartbeat goes unanswered (a half-open one must not look alive).
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  EmptyResultSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { AgentHello } from '../../../protocol/hello';
import { INBOX_URI, INSTRUCTIONS, SERVER_CAPABILITIES, SERVER_INFO, SESSION_REPLACED } from '../../../protocol/mcp';
import type { Caller } from '../../bus/decide';
import { BusError } from '../../bus/errors';
import { caseTwinMessage, isIdentityName } from '../../bus/identity';
import type { Hub } from '../../hub';
import { isSessionLabel, type PushPayload, type Session } from '../../presence/sessions';
import { ReplayCache } from './replayCache';
import { SocketTransport } from './socketTransport';
import { cliOfMcpClient, versionLimits } from '../../../shared/agentVersions';
import { registerTools } from './tools';
import { inline } from '../../deliver/render';

export interface AgentConnectionOptions {
  heartbeatMs: number;
  /** How long a connection may take from its hello to `initialized` before it is closed. */
  handshakeMs: number;
  /** The bridge's ancestry (itself first) as the hub proved it, or why it could not be proved. */
  ancestry?: readonly number[] | BusError;
}

export function serveAgent(
  hub: Hub,
  socket: Socket,
  hello: AgentHello,
  leftover: Buffer,
  options: AgentConnectionOptions,
): void {
  // A key shaped like a label would be shown as itself: the hub picks one instead.
  const key =
    hello.session && /^[\w.:-]{1,128}$/.test(hello.session) && !isSessionLabel(hello.session)
      ? hello.session
      : `s-${randomUUID()}`;
  let identity = hello.identity && isIdentityName(hello.identity) ? hello.identity : undefined;
  // A name that is a known one in another case stays unregistered; every tool says why.
  const twin = identity ? hub.roster.caseTwin(identity) : undefined;
  let clash = identity && twin ? caseTwinMessage(identity, twin) : undefined;
  if (clash) identity = undefined;
  let roles = (Array.isArray(hello.roles) ? hello.roles : [])
    .filter((r) => typeof r === 'string' && isIdentityName(r))
    .slice(0, 16);
  const badName = hello.identity && !identity ? hello.identity : undefined;
  let initialized = false;
  let subscribed = false;
  let session: Session | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const server = new McpServer(
    { ...SERVER_INFO },
    { capabilities: structuredClone(SERVER_CAPABILITIES), instructions: INSTRUCTIONS },
  );
  let release!: () => void;
  const transport = new SocketTransport(socket, leftover, new Promise<void>((resolve) => (release = resolve)));

  // A bridge that failed its proof, or may not speak for its name here, is served so its client hears why.
  let refusal = options.ancestry instanceof BusError ? options.ancestry : undefined;
  const ancestry = Array.isArray(options.ancestry) ? options.ancestry : undefined;

  const caller = (): Caller => {
    if (refusal) throw refusal;
    if (!identity) {
      if (clash) throw new BusError('invalid_identity', clash);
      const why = badName
        ? `"${badName}" is not a valid identity name (letters, digits, '.', '_' or '-').`
        : 'This session has no identity.';
      throw new BusError(
        'no_identity',
        `${why} Call whoami with {"name": "your-name"}, or start the bridge with --name NAME or HANDOFF_AGENT=NAME.`,
      );
    }
    return { identity, session: key, node: hub.node, channel: 'agent' };
  };

  const deliver = (push: PushPayload): boolean => {
    if (!transport.isOpen || !initialized) return false;
    const meta: Record<string, string> = {
      message_id: push.id,
      from: push.from,
      thread: inline(push.thread), // the sender's words: one line, no tags
      replayed: String(push.kind === 'replayed'),
      chase: String(push.kind === 'chase'),
    };
    server.server
      .notification({ method: 'notifications/claude/channel', params: { content: push.text, meta } })
      .catch(() => undefined);
    if (subscribed) server.server.sendResourceUpdated({ uri: INBOX_URI }).catch(() => undefined);
    return true;
  };

  const attach = async (): Promise<void> => {
    if (!identity || session || !initialized || refusal) return;
    session = {
      key,
      identity,
      roles,
      // Shown in logs and the panel: one short line, whatever the agent claims.
      get client() {
        return String(hello.client ?? server.server.getClientVersion()?.name ?? 'unknown')
          .replace(/[^\w .:/@+-]/g, '?')
          .slice(0, 64);
      },
      get limits() {
        const info = server.server.getClientVersion();
        return versionLimits(cliOfMcpClient(info?.name), info?.version, hello.checkout?.linked ?? false);
      },
      // Proven: the bridge's parent, as the kernel has it; else what the hello says.
      agentPid: ancestry ? ancestry[1] : typeof hello.agentPid === 'number' ? hello.agentPid : undefined,
      ancestry,
      terminal: hello.terminal,
      checkout: hello.checkout,
      connectedAt: Date.now(),
      lastSeen: Date.now(),
      pushed: new Set(),
      deliver,
      isOpen: () => transport.isOpen,
      close: (reason) => {
        // Taken over by another connection with this key: its bridge must stop, not come back and take it again.
        if (reason.startsWith('replaced'))
          void transport.send({ jsonrpc: '2.0', method: SESSION_REPLACED, params: { reason } }).catch(() => undefined);
        void transport.close();
      },
      resumed: hello.resume === true,
    };
    try {
      await hub.attach(session);
    } catch (e) {
      // A twin registered in the meantime (two hellos racing): this one stays unregistered, saying why.
      session = undefined;
      if (e instanceof BusError && e.code === 'invalid_identity') [identity, clash] = [undefined, e.message];
      if (e instanceof BusError && e.code === 'not_your_channel') refusal = e;
      throw e;
    }
  };

  registerTools(server, {
    hub,
    sessionKey: key,
    caller,
    register: async (name, newRoles) => {
      if (refusal) throw refusal;
      if (identity && identity !== name) {
        throw new BusError(
          'invalid_input',
          `This session is already ${identity}; an identity cannot change on a live session. Start another bridge with --name ${name}.`,
        );
      }
      const other = hub.roster.caseTwin(name);
      if (other) throw new BusError('invalid_identity', caseTwinMessage(name, other));
      identity = name;
      roles = newRoles.length ? newRoles : roles;
      await attach();
      return caller();
    },
  });

  server.registerResource(
    'inbox',
    INBOX_URI,
    { description: 'Your open handoffs, oldest first', mimeType: 'application/json' },
    (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify(
            identity
              ? hub.inbox(identity, { limit: 200 }).map((i) => ({
                  message_id: i.message.id,
                  from: i.message.from,
                  state: i.delivery.state,
                  body_is_untrusted_data: true,
                  body: i.message.body,
                }))
              : [],
          ),
        },
      ],
    }),
  );
  server.server.setRequestHandler(SubscribeRequestSchema, (req) => {
    if (req.params.uri === INBOX_URI) subscribed = true;
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    if (req.params.uri === INBOX_URI) subscribed = false;
    return {};
  });

  // Not initialized in time: a connection that never finishes the handshake holds nothing.
  const handshake = setTimeout(() => void transport.close(), options.handshakeMs);
  handshake.unref();
  server.server.oninitialized = () => {
    if (initialized) return; // a second `initialized` starts nothing twice
    clearTimeout(handshake);
    initialized = true;
    if (identity) void attach().catch(() => undefined);
    heartbeat = setInterval(() => {
      server.server
        .request({ method: 'ping' }, EmptyResultSchema, { timeout: options.heartbeatMs * 2 })
        .then(() => {
          if (session) session.lastSeen = Date.now();
        })
        .catch(() => void transport.close()); // no answer: treat as gone, the agent reconnects
    }, options.heartbeatMs);
    heartbeat.unref();
  };
  transport.onunread = (queued, pastBound) => hub.pushes.unread(key, queued, pastBound);
  const wire = new ReplayCache().wrap(transport);
  wire.onclose = () => {
    clearTimeout(handshake);
    clearInterval(heartbeat);
    if (session) hub.detach(session);
  };
  // The name is made known before `initialize` is read, so a peer can address it the moment the
  // handshake completes; it is live (pushed to) once `initialized` attaches it.
  if (identity)
    void hub.roster
      .remember(identity, roles)
      .catch(() => undefined)
      .finally(release);
  else release();
  void server.connect(wire);
}

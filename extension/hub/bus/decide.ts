// What a request means for the bus, decided over the current state: the event to commit, or a
// refusal that says what was wrong and what to do. No I/O, no clock (time comes in `now`).
import { BusError } from './errors';
import { IDENTITY_PATTERN, MESSAGE_ID_PATTERN, nearestNames } from './identity';
import {
  RESEND_PREFIX,
  type Attachment,
  type Channel,
  type BusEvent,
  type BusState,
  type DeliveryState,
  type HotMessage,
  type Message,
  type Outcome,
  type ReceiptKind,
} from './model';
import type { Fingerprint, RecentSends } from './recentSends';
import { isRemote, localize, qualify } from './relay';

export interface Limits {
  maxBodyBytes: number;
  maxRecipients: number;
  defaultSlaMs: number;
  defaultTtlMs: number;
  /** Same body to the same recipients without a key inside this window is a probable duplicate. */
  duplicateWindowMs: number;
  idempotencyWindowMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 64 * 1024,
  maxRecipients: 64,
  defaultSlaMs: 10 * 60_000,
  defaultTtlMs: 24 * 60 * 60_000,
  duplicateWindowMs: 10 * 60_000,
  idempotencyWindowMs: 7 * 24 * 60 * 60_000,
};

export interface Caller {
  identity: string;
  session: string;
  node: string;
  /** Where the caller speaks from (default: an agent's MCP session). */
  channel?: Channel;
  /** A person, not an agent (the editor's person, or the CLI as you). */
  person?: boolean;
}

/** What a sender asks for, before the bus resolves and checks it. */
export interface SendDraft {
  to: string[];
  body: string;
  thread?: string;
  replyTo?: string;
  attachments?: Attachment[];
  requiresAck?: boolean;
  slaMs?: number;
  ttlMs?: number;
  idempotencyKey?: string;
  /**
   * The bridge's key for this one call, so that sending it again to a new hub, after the old one
   * went away without answering, lands it once. Unlike the sender's own key it leaves the check
   * for probable duplicates on.
   */
  resendKey?: string;
  /** The sender confirms a probable duplicate is meant as a new message. */
  insist?: boolean;
  /** Whom to escalate to if it stays unacknowledged past its chase; default: this hub's person. */
  escalateTo?: string;
}

export type SendDecision =
  { kind: 'new'; message: Message; fingerprint: Fingerprint } | { kind: 'duplicate'; id: string; why: DuplicateWhy };

export interface SendContext {
  caller: Caller;
  now: number;
  newId: () => string;
  /** Allocated when the send is decided, so commit order (and push order) follows it: FIFO. */
  nextSeq: () => number;
  /** Asked only for `*`: building the set cost every send. */
  liveIdentities: () => ReadonlySet<string>;
  recent: RecentSends;
  limits: Limits;
  /** Repositories on this machine linked to this one: their identities answer only to `name@repo`. */
  linked?: ReadonlySet<string>;
}

function resolveRecipients(state: BusState, to: string[], ctx: SendContext): string[] {
  if (to.length === 0)
    throw new BusError('invalid_input', 'to is empty: name at least one identity, `role:NAME`, or `*`.');
  // Most sends name one identity: no set to gather it in.
  const only = to.length === 1 ? to[0].trim() : undefined;
  if (only !== undefined && only !== '*' && !only.startsWith('role:') && IDENTITY_PATTERN.test(only))
    return [resolveName(state, only, ctx.caller.node, ctx.linked)];
  const out = new Set<string>();
  const known = Object.keys(state.identities);
  for (const raw of to) {
    const target = raw.trim();
    if (target === '*') {
      const live = [...ctx.liveIdentities()].filter((n) => n !== ctx.caller.identity);
      if (live.length === 0) {
        throw new BusError(
          'unknown_identity',
          '`*` reaches every other identity with a live session, and there is none right now. Address a known identity by name instead (its mail waits in its queue); list_peers shows them.',
          { known },
        );
      }
      live.forEach((n) => out.add(n));
    } else if (target.startsWith('role:')) {
      const role = target.slice(5);
      // A role is a name without `@`: this repository's holders only, never a linked one's.
      const holders = known.filter((n) => state.identities[n].roles.includes(role) && !isLinked(n, ctx.linked));
      if (holders.length === 0) {
        const roles = [...new Set(known.flatMap((n) => state.identities[n].roles))];
        throw new BusError(
          'unknown_identity',
          `No identity has the role "${role}". Known roles: ${roles.join(', ') || '(none)'}. Agents declare roles with --role when they connect.`,
          { roles },
        );
      }
      holders.forEach((n) => out.add(n));
    } else if (!IDENTITY_PATTERN.test(target)) {
      throw new BusError(
        'invalid_identity',
        `"${target}" is not an identity name: use letters, digits, '.', '_' or '-' (up to 64), optionally @node. list_peers shows the known names.`,
      );
    } else {
      out.add(resolveName(state, target, ctx.caller.node, ctx.linked));
    }
  }
  if (out.size > ctx.limits.maxRecipients) {
    throw new BusError(
      'invalid_input',
      `${out.size} recipients is over the limit of ${ctx.limits.maxRecipients}; split the handoff.`,
    );
  }
  return [...out];
}

/** `name@repo` for a repository on this machine linked to this one. */
function isLinked(name: string, linked?: ReadonlySet<string>): boolean {
  const at = name.indexOf('@');
  return at >= 0 && !!linked?.has(name.slice(at + 1));
}

/**
 * The identity a name means. `name@thisnode` is the local `name`; an unqualified name matches the
 * local identity and every remote `name@node` — more than one match is an error that lists them,
 * never a guess.
 */
function resolveName(state: BusState, target: string, node: string, linked?: ReadonlySet<string>): string {
  const name = localize(target, node);
  const matches = state.identities[name] ? [name] : []; // qualified (by this node or another): exactly that identity
  if (!isRemote(target)) {
    // unqualified: every remote identity of that name too — but never a linked repository's
    const remote = `${name}@`;
    for (const n in state.identities) if (n.startsWith(remote) && !isLinked(n, linked)) matches.push(n);
  } else if (matches.length === 0 && isLinked(target, linked)) {
    // A linked repository's agent that has not connected there yet: its hub keeps the mail for it (G7).
    return target;
  }
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) {
    const options = matches.map((n) => qualify(n, node));
    throw new BusError(
      'ambiguous_identity',
      `"${target}" names ${matches.length} identities on different nodes, so nothing was sent. Address one of them by its qualified name: ${options.map((n) => `"${n}"`).join(', ')}.`,
      { options },
    );
  }
  const known = Object.keys(state.identities);
  const near = nearestNames(name, known);
  const hint = near.length
    ? `Did you mean ${near.map((n) => `"${n}"`).join(' or ')}?`
    : `Known identities: ${known.slice(0, 10).join(', ') || '(none yet)'}.`;
  throw new BusError(
    'unknown_identity',
    `No identity "${target}" has ever connected to this hub or been announced by another node, so nothing was sent. ${hint} Names match exactly; list_peers shows them.`,
    { suggestions: near, known },
  );
}

export type DuplicateWhy = 'idempotency_key' | 'probable_duplicate' | 'resent';

/** The key that makes a send land once: the sender's own, else the bridge's resend key. */
export function onceKey(req: Pick<SendDraft, 'idempotencyKey' | 'resendKey'>): string | undefined {
  return req.idempotencyKey ?? (req.resendKey ? `${RESEND_PREFIX}${req.resendKey}` : undefined);
}

export function decideSend(state: BusState, req: SendDraft, ctx: SendContext): SendDecision {
  const { caller, now, limits } = ctx;
  const key = onceKey(req);
  if (key) {
    const first = state.idempotency[`${caller.identity}\n${key}`];
    if (first) return { kind: 'duplicate', id: first.id, why: req.idempotencyKey ? 'idempotency_key' : 'resent' };
  }
  const bytes = Buffer.byteLength(req.body, 'utf8');
  if (bytes > limits.maxBodyBytes) {
    throw new BusError(
      'payload_too_large',
      `The body is ${bytes} bytes; the limit is ${limits.maxBodyBytes}. Nothing was sent. Put large content in a workspace file and pass it in attachments as {path}.`,
      { bytes, limit: limits.maxBodyBytes },
    );
  }
  if (req.body.trim() === '')
    throw new BusError('invalid_input', 'The body is empty; say what the recipient should do.');
  if (req.escalateTo !== undefined && !IDENTITY_PATTERN.test(req.escalateTo)) {
    throw new BusError(
      'invalid_identity',
      `escalate_to "${req.escalateTo.slice(0, 80)}" is not an identity name: use letters, digits, '.', '_' or '-' (up to 64), optionally @node.`,
    );
  }
  const recipients = resolveRecipients(state, req.to, ctx);
  const fingerprint = ctx.recent.fingerprint(caller.identity, recipients, req.body);
  const recent = ctx.recent.find(caller.identity, recipients, req.body, fingerprint);
  if (!req.insist && !req.idempotencyKey && recent && now - recent.sentAt < limits.duplicateWindowMs) {
    return { kind: 'duplicate', id: recent.id, why: 'probable_duplicate' };
  }
  const id = ctx.newId();
  const message: Message = {
    id,
    seq: ctx.nextSeq(),
    from: caller.identity,
    address: req.to,
    recipients,
    thread: req.thread ?? id,
    replyTo: req.replyTo,
    body: req.body,
    attachments: req.attachments ?? [],
    requiresAck: req.requiresAck ?? true,
    slaMs: req.slaMs ?? limits.defaultSlaMs,
    ttlMs: req.ttlMs ?? limits.defaultTtlMs,
    idempotencyKey: key,
    ...(req.escalateTo ? { escalateTo: req.escalateTo } : {}),
    sentAt: now,
    sentBySession: caller.session,
    node: caller.node,
    // An agent's send is the usual case and is not marked: an open message costs bytes of memory.
    ...(caller.channel && caller.channel !== 'agent' ? { channel: caller.channel } : {}),
    ...(caller.person && caller.channel !== 'agent' ? { person: true as const } : {}),
  };
  return { kind: 'new', message, fingerprint };
}

export function checkMessageId(id: string): void {
  if (!MESSAGE_ID_PATTERN.test(id)) {
    throw new BusError(
      'invalid_message_id',
      `"${id.slice(0, 80)}" is not a message id: ids are 26-character ULIDs such as 01JD3V7W2K8Q5X9Y4Z6A1B2C3D. Copy the id from inbox or the push.`,
    );
  }
}

/** A receipt may only be written by a recipient of the message (G3). */
/** What a receipt does: nothing (the message is settled, or the same receipt is already there), or one event. */
export type ReceiptDecision =
  { kind: 'settled' } | { kind: 'repeat'; state: DeliveryState } | { kind: 'record'; event: BusEvent };

export function decideReceipt(
  hot: HotMessage | undefined,
  archived: boolean,
  id: string,
  kind: ReceiptKind,
  caller: Caller,
  now: number,
  outcome?: Outcome,
  summary?: string,
): ReceiptDecision {
  checkMessageId(id);
  if (!hot) {
    if (archived) return { kind: 'settled' }; // settled already: the receipt changes nothing, and says so
    throw new BusError('unknown_message', `No message ${id} on this hub. Check the id with inbox.`);
  }
  const delivery = hot.deliveries[caller.identity];
  if (!delivery) {
    throw new BusError(
      'not_addressed_to_you',
      `Message ${id} is addressed to ${hot.message.recipients.join(', ')}, not to ${caller.identity}; only a recipient can write its ${kind} receipt.`,
    );
  }
  if (kind === 'result' && !outcome)
    throw new BusError('invalid_input', 'A result needs an outcome: done, stuck or rejected.');
  const repeat = delivery.receipts.some(
    (r) =>
      r.kind === kind &&
      r.by === caller.identity &&
      r.outcome === outcome &&
      (kind !== 'result' || r.summary === summary),
  );
  if (repeat) return { kind: 'repeat', state: delivery.state };
  return {
    kind: 'record',
    event: {
      type: 'receipt',
      id,
      recipient: caller.identity,
      receipt: {
        kind,
        by: caller.identity,
        session: caller.session,
        node: caller.node,
        at: now,
        channel: caller.channel ?? 'agent',
        outcome,
        summary,
      },
    },
  };
}

/** A person's chase: one `chased` event per recipient that has not ACKed or finished. */
export function decideChase(hot: HotMessage | undefined, id: string, now: number): BusEvent[] {
  if (!hot)
    throw new BusError(
      'unknown_message',
      `Message ${id} is not open on this hub (settled or unknown); there is nothing to chase.`,
    );
  return Object.values(hot.deliveries)
    .filter((d) => d.state !== 'acked' && d.state !== 'done')
    .map((d) => ({ type: 'chased', id, recipient: d.recipient, at: now }));
}

/** A person closes an open handoff by hand. */
export function decideResolve(
  hot: HotMessage | undefined,
  id: string,
  by: string,
  now: number,
  note?: string,
): BusEvent {
  if (!hot) throw new BusError('unknown_message', `Message ${id} is not open on this hub (settled or unknown).`);
  return { type: 'resolved', id, resolution: { by, at: now, note } };
}

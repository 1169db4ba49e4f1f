// How bus data looks in the Matrix room, and back. Handoffs and receipts are m.room.message
// events with a plain-text body a person can read in any client (Element on a phone), plus the
// structured data hubs read. Receipts relate to their handoff with m.reference. A backlog goes
// out several entries per event (`org.handoff.batch`). Names on the wire are always qualified
// (`name@node`); each hub drops its own qualifier when it reads them.
// Everything read here came from the network: every decoder is a zod schema behind a size and
// depth limit, and answers a value or the reason it is unusable — it never throws.
import { z } from 'zod';
import { MESSAGE_ID_PATTERN, IDENTITY_PATTERN } from '../bus/identity';
import type { Attachment, Message, OutboxEntry, Receipt, SurfacePath } from '../bus/model';
import { isRemote, localize, qualify } from '../bus/relay';
import { personUser, reactionMeaning, REACTIONS, replyText } from './person';
import { sessionLabel } from '../presence/sessions';

export const MESSAGE_TYPE = 'm.room.message';
export const REACTION_TYPE = 'm.reaction';
/** A recipient node's pushed / surfaced progress: for the sender's hub, not for people (clients hide unknown types). */
export const PROGRESS_TYPE = 'org.handoff.progress';
export const HANDOFF_KEY = 'org.handoff.message';
export const RECEIPT_KEY = 'org.handoff.receipt';
export const BATCH_KEY = 'org.handoff.batch';
/** Room state, one per node (state_key = node): the identities that node hosts. */
export const NODE_STATE = 'org.handoff.node';

/** An event as the homeserver hands it over, before it is read as one of ours. */
export interface RawEvent {
  event_id: string;
  type: string;
  sender: string;
  origin_server_ts: number;
  state_key?: string;
  content: Record<string, unknown>;
}
const MAX_BODY_BYTES = 64 * 1024;
const READABLE_CHARS = 2000;
/** A homeserver event is at most 64 KiB; decoded content past these limits is refused unread. */
const MAX_CONTENT_BYTES = 96 * 1024;
const MAX_DEPTH = 8;
const MAX_VALUES = 20_000;
export const MAX_BATCH = 200;
/** A batch event stays well under the homeserver's 64 KiB event limit. */
export const BATCH_BYTES = 48 * 1024;

export type WireReceiptKind = Receipt['kind'] | 'pushed' | 'surfaced';

export interface WireMessage {
  id: string;
  from: string;
  to: string[];
  thread: string;
  reply_to?: string;
  body: string;
  attachments: Attachment[];
  requires_ack: boolean;
  sla_ms: number;
  ttl_ms: number;
  sent_at: number;
  session: string;
  node: string;
  /** Ed25519 signature by the node's announced key, over the rest of this object (keys.ts). */
  sig?: string;
}

export interface WireReceipt {
  message_id: string;
  /** The handoff's sender, qualified: the hub that should take the receipt. */
  sender: string;
  kind: WireReceiptKind;
  by: string;
  session: string;
  node: string;
  at: number;
  outcome?: Receipt['outcome'];
  summary?: string;
  /** For `surfaced`: how the recipient's model was shown it. */
  path?: SurfacePath;
  via?: string;
  sig?: string;
}

export interface Announcement {
  node: string;
  identities: { name: string; roles: string[] }[];
  /** The node's Ed25519 public key (base64 SPKI DER). */
  key?: string;
  /** The node's Matrix device in an encrypted room, signed by the node's key. */
  device?: DeviceClaim;
}

/** "This device speaks for node N": its id and Ed25519 key, signed by N's key (deviceTrust.ts). */
export interface DeviceClaim {
  id: string;
  ed25519: string;
  sig: string;
}

/** An entry of a batch (or a single event's data), with the object as it came, for its signature. */
export type BatchItem =
  | { kind: 'message'; wire: WireMessage; raw: unknown }
  | { kind: 'receipt'; wire: WireReceipt; raw: unknown }
  | { kind: 'bad'; why: string };

/** Signs a wire object with this node's key. */
export type Signer = (wire: object) => string;

/** A reply (or thread reply) in the room: the events it may answer, most specific first, and its own text. */
export interface Reply {
  targets: string[];
  text: string;
}

// ---- schemas ----

const nodeOf = (name: string) => name.slice(name.indexOf('@') + 1);
const count = z.number().nonnegative();
const messageId = z.string().regex(MESSAGE_ID_PATTERN, 'not a message id');
const eventId = z.string().max(255).regex(/^\$/, 'not an event id');
const qualified = z
  .string()
  .max(200)
  .regex(IDENTITY_PATTERN, 'not an identity name')
  .refine(isRemote, 'not qualified (name@node)');
const nodeName = z.string().min(1).max(128);

const wireMessage = z
  .object({
    id: messageId,
    from: qualified,
    to: z.array(qualified).min(1).max(64),
    thread: z.string().max(200),
    reply_to: messageId.optional(),
    body: z
      .string()
      .refine((b) => b.trim() !== '', 'empty')
      .refine((b) => Buffer.byteLength(b) <= MAX_BODY_BYTES, 'over 64 KiB'),
    attachments: z
      .array(z.object({ path: z.string().max(1024), sha256: z.string().max(64), bytes: count }))
      .max(32)
      .default([]),
    requires_ack: z.boolean(),
    sla_ms: count,
    ttl_ms: count,
    sent_at: count,
    session: z.string().max(200),
    node: nodeName,
    sig: z.string().max(200).optional(),
  })
  .refine((w) => nodeOf(w.from) === w.node, {
    message: 'a sender must be a name on the node it claims',
    path: ['from'],
  });

const wireReceipt = z
  .object({
    message_id: messageId,
    sender: qualified,
    kind: z.enum(['read', 'ack', 'result', 'pushed', 'surfaced']),
    by: qualified,
    session: z.string().max(200),
    node: nodeName,
    at: count,
    outcome: z.enum(['done', 'stuck', 'rejected']).optional(),
    summary: z.string().max(8192).optional(),
    path: z.enum(['hook', 'tool_result', 'channel']).optional(),
    via: z.string().max(200).optional(),
    sig: z.string().max(200).optional(),
  })
  .refine((w) => nodeOf(w.by) === w.node, { message: "only the recipient's node writes its receipt", path: ['by'] })
  .refine((w) => w.kind !== 'result' || w.outcome !== undefined, {
    message: 'a result needs an outcome',
    path: ['outcome'],
  });

const announcementSchema = z.object({
  node: nodeName,
  identities: z
    .array(
      z.object({
        name: z
          .string()
          .max(64)
          .regex(IDENTITY_PATTERN, 'not an identity name')
          .refine((n) => !isRemote(n), 'qualified'),
        roles: z.array(z.unknown()).max(64).optional(),
      }),
    )
    .max(1000),
  key: z.string().max(200).optional(),
  device: z
    .object({ id: z.string().min(1).max(255), ed25519: z.string().max(100), sig: z.string().max(200) })
    .optional(),
});

const rawEvent = z.object({
  event_id: eventId,
  type: z.string().max(255),
  sender: z
    .string()
    .max(255)
    .regex(/^@[^:\s]+:\S+$/, 'not a user id'),
  origin_server_ts: count,
  state_key: z.string().max(255).optional(),
  content: z.record(z.string(), z.unknown()),
});

const relatesTo = z.object({
  rel_type: z.string().max(255).optional(),
  event_id: eventId.optional(),
  key: z.string().max(64).optional(),
  is_falling_back: z.boolean().optional(),
  'm.in_reply_to': z.object({ event_id: eventId }).optional(),
});

const textMessage = z.object({
  msgtype: z.string().max(64),
  body: z.string().max(MAX_BODY_BYTES),
  'm.relates_to': relatesTo.optional(),
});

// ---- limits and reasons ----

/** Depth, value count and size of decoded JSON, walked without recursion. */
function shapeProblem(v: unknown): string | undefined {
  const stack: [unknown, number][] = [[v, 0]];
  let values = 0;
  while (stack.length) {
    const [x, depth] = stack.pop()!;
    if (++values > MAX_VALUES) return `more than ${MAX_VALUES} values`;
    if (x === null || typeof x !== 'object') continue;
    if (depth >= MAX_DEPTH) return `nested deeper than ${MAX_DEPTH}`;
    for (const child of Array.isArray(x) ? x : Object.values(x)) stack.push([child, depth + 1]);
  }
  if (Buffer.byteLength(JSON.stringify(v) ?? '') > MAX_CONTENT_BYTES) return `over ${MAX_CONTENT_BYTES} bytes`;
  return undefined;
}

function decode<T>(schema: z.ZodType<T>, v: unknown, what: string): T | string {
  const problem = shapeProblem(v);
  if (problem) return `${what} ${problem}`;
  const r = schema.safeParse(v);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  return `bad ${issue.path.length ? issue.path.join('.') : what}: ${issue.message}`;
}

const present = (v: unknown) => v !== undefined && v !== null;

// ---- decoders ----

/** A room event from /sync or /messages, or why it is unusable. */
export function readEvent(v: unknown): RawEvent | string {
  return decode(rawEvent, v, 'event') as RawEvent | string;
}

/** A handoff from the wire, or why it is unusable. Its `from` must be a name on the node it claims. */
export function readMessage(content: Record<string, unknown>): WireMessage | string {
  if (!present(content[HANDOFF_KEY])) return 'no handoff data';
  return decode(wireMessage, content[HANDOFF_KEY], 'handoff');
}

/** A receipt from the wire, or why it is unusable. Only its recipient's node may write it (G3). */
export function readReceipt(content: Record<string, unknown>): WireReceipt | string {
  if (!present(content[RECEIPT_KEY])) return 'no receipt data';
  return decode(wireReceipt, content[RECEIPT_KEY], 'receipt');
}

/** The entries of a batch event, in order; a bad entry is reported, the others still count. */
export function readBatch(content: Record<string, unknown>): BatchItem[] | string {
  const list = decode(z.array(z.record(z.string(), z.unknown())).min(1).max(MAX_BATCH), content[BATCH_KEY], 'batch');
  if (typeof list === 'string') return list;
  return list.map((item): BatchItem => {
    if (present(item.message)) {
      const w = decode(wireMessage, item.message, 'handoff');
      return typeof w === 'string' ? { kind: 'bad', why: w } : { kind: 'message', wire: w, raw: item.message };
    }
    const w = readReceipt({ [RECEIPT_KEY]: item.receipt });
    return typeof w === 'string' ? { kind: 'bad', why: w } : { kind: 'receipt', wire: w, raw: item.receipt };
  });
}

export function readAnnouncement(ev: RawEvent): Announcement | string {
  const a = decode(announcementSchema, ev.content, 'announcement');
  if (typeof a === 'string') return a;
  if (a.node !== ev.state_key) return 'bad node: not the state key';
  return {
    node: a.node,
    ...(a.key ? { key: a.key } : {}),
    ...(a.device ? { device: a.device } : {}),
    identities: a.identities.map((i) => ({
      name: i.name,
      roles: (i.roles ?? []).filter((r): r is string => typeof r === 'string' && r.length <= 64).slice(0, 16),
    })),
  };
}

/** A person's reply or thread reply, or why it is not one. */
export function readReply(content: Record<string, unknown>): Reply | string {
  const m = decode(textMessage, content, 'message');
  if (typeof m === 'string') return m;
  const rel = m['m.relates_to'];
  const inReplyTo = rel?.['m.in_reply_to']?.event_id;
  const targets =
    rel?.rel_type === 'm.thread' ? [rel.is_falling_back ? undefined : inReplyTo, rel.event_id, inReplyTo] : [inReplyTo];
  const unique = [...new Set(targets.filter((t): t is string => !!t))];
  if (unique.length === 0) return 'not a reply to anything';
  const text = replyText(m.body);
  if (!text) return 'an empty reply';
  return { targets: unique, text };
}

/** A reaction on a handoff event: what it means, or why it means nothing. */
export function readReaction(content: Record<string, unknown>): { eventId: string; meaning: 'ack' | 'read' } | string {
  const r = decode(z.object({ 'm.relates_to': relatesTo }), content, 'reaction');
  if (typeof r === 'string') return r;
  const rel = r['m.relates_to'];
  if (rel.rel_type !== 'm.annotation' || !rel.event_id || rel.key === undefined) return 'not an annotation of an event';
  const meaning = reactionMeaning(rel.key);
  if (!meaning)
    return `the reaction ${JSON.stringify(rel.key)} means nothing here (${Object.keys(REACTIONS).join(' ')} do)`;
  return { eventId: rel.event_id, meaning };
}

// ---- encoders ----

function oneLine(s: string, max: number): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function wireOf(
  entry: OutboxEntry,
  node: string,
  signer?: Signer,
): { message: WireMessage } | { receipt: WireReceipt } {
  const w = unsigned(entry, node);
  if (!signer) return w;
  return 'message' in w
    ? { message: { ...w.message, sig: signer(w.message) } }
    : { receipt: { ...w.receipt, sig: signer(w.receipt) } };
}

/**
 * Sessions go out by label, as to every other client: anyone in the room would otherwise hold the
 * key that takes a live session over. The receiving node keeps `session` as an opaque name (to tell
 * records apart), so a label reads there as a key did, on old nodes too.
 */
function unsigned(entry: OutboxEntry, node: string): { message: WireMessage } | { receipt: WireReceipt } {
  const item = entry.item;
  if (item.kind === 'message') {
    const m = item.message;
    return {
      message: {
        id: m.id,
        from: qualify(m.from, node),
        to: m.recipients.map((r) => qualify(r, node)),
        thread: m.thread,
        reply_to: m.replyTo,
        body: m.body,
        attachments: m.attachments,
        requires_ack: m.requiresAck,
        sla_ms: m.slaMs,
        ttl_ms: m.ttlMs,
        sent_at: m.sentAt,
        session: sessionLabel(m.sentBySession),
        node,
      },
    };
  }
  if (item.kind === 'progress') {
    return {
      receipt: {
        message_id: item.messageId,
        sender: item.sender,
        kind: item.step,
        by: qualify(item.recipient, node),
        session: sessionLabel(item.session),
        node,
        at: item.at,
        ...(item.path ? { path: item.path, via: item.via } : {}),
      },
    };
  }
  const r = item.receipt;
  return {
    receipt: {
      message_id: item.messageId,
      sender: item.sender,
      kind: r.kind,
      by: qualify(r.by, node),
      session: sessionLabel(r.session),
      node,
      at: r.at,
      outcome: r.outcome,
      summary: r.summary,
    },
  };
}

function readableReceipt(w: WireReceipt): string {
  const what =
    w.kind === 'read'
      ? 'read'
      : w.kind === 'ack'
        ? 'ACKed'
        : w.kind === 'pushed'
          ? 'was pushed'
          : w.kind === 'surfaced'
            ? 'was shown'
            : `reported ${w.outcome}${w.summary ? `: ${oneLine(w.summary, 300)}` : ''} on`;
  return `${w.by} ${what} handoff ${w.message_id} from ${w.sender}`;
}

/** The event an outbox entry becomes. A pure function of the entry: every retry sends the same bytes. */
export function outboxEvent(
  entry: OutboxEntry,
  node: string,
  signer?: Signer,
): { type: string; content: Record<string, unknown> } {
  const wire = wireOf(entry, node, signer);
  if ('message' in wire) {
    const w = wire.message;
    const people = w.to.map(personUser).filter((u): u is string => !!u);
    const ask = w.requires_ack ? ' (needs an ACK)' : '';
    // Said where the person reads it: how to answer from a plain Matrix client.
    const how = people.length
      ? `\n\nReply to answer ${w.from}; react ✅ to ACK; reply "done: …", "stuck: …" or "rejected: …" to finish.`
      : '';
    // The readable copy is cut short: the event must stay under the homeserver's 64 KiB limit.
    const text =
      w.body.length > READABLE_CHARS
        ? `${w.body.slice(0, READABLE_CHARS)}… (${w.body.length} characters in all)`
        : w.body;
    const to = w.to.map((q) => personUser(q) ?? q).join(', ');
    const body = `Handoff from ${w.from} to ${to}${ask}:\n\n${text}${how}\n\n— handoff ${w.id}, thread ${w.thread}`;
    const content: Record<string, unknown> = { msgtype: 'm.text', body, [HANDOFF_KEY]: w };
    if (people.length) content['m.mentions'] = { user_ids: people };
    return { type: MESSAGE_TYPE, content };
  }
  const content: Record<string, unknown> = {
    msgtype: 'm.notice',
    body: readableReceipt(wire.receipt),
    [RECEIPT_KEY]: wire.receipt,
  };
  const ref = entry.item.kind !== 'message' ? entry.item.refEventId : undefined;
  if (ref) content['m.relates_to'] = { rel_type: 'm.reference', event_id: ref };
  return { type: entry.item.kind === 'progress' ? PROGRESS_TYPE : MESSAGE_TYPE, content };
}

/** Progress and the rest never share an event: one is hidden from people, the other is for them. */
export function eventTypeOf(entry: OutboxEntry): string {
  return entry.item.kind === 'progress' ? PROGRESS_TYPE : MESSAGE_TYPE;
}

/** The bytes an entry adds to a batch event (its data and its readable line). */
export function batchCost(entry: OutboxEntry, node: string): number {
  return Buffer.byteLength(JSON.stringify(unsigned(entry, node))) + 240 + 100; // line, signature
}

/**
 * Several outbox entries in one event, in order — how a backlog drains at more than one event per
 * homeserver round trip. The readable body lists them one line each.
 */
export function batchEvent(
  entries: OutboxEntry[],
  node: string,
  signer?: Signer,
): { type: string; content: Record<string, unknown> } {
  const items = entries.map((e) => wireOf(e, node, signer));
  const lines = items.map((i) =>
    'message' in i
      ? `• Handoff from ${i.message.from} to ${i.message.to.join(', ')}: ${oneLine(i.message.body, 160)} (${i.message.id})`
      : `• ${readableReceipt(i.receipt)}`,
  );
  const messages = items.filter((i) => 'message' in i).length;
  const body = `${items.length} entries from ${node} (${messages} handoffs, ${items.length - messages} receipts), sent together while catching up:\n${lines.join('\n')}`;
  const content: Record<string, unknown> = { msgtype: messages ? 'm.text' : 'm.notice', body, [BATCH_KEY]: items };
  // Receipts all about one handoff still relate to it, so a client shows them with it.
  const refs = new Set(entries.map((e) => (e.item.kind === 'message' ? undefined : e.item.refEventId)));
  const [ref] = refs;
  if (refs.size === 1 && ref) content['m.relates_to'] = { rel_type: 'm.reference', event_id: ref };
  return { type: eventTypeOf(entries[0]), content };
}

export function announcement(
  node: string,
  identities: Announcement['identities'],
  key?: string,
  device?: DeviceClaim,
): Record<string, unknown> {
  return { node, identities, ...(key ? { key } : {}), ...(device ? { device } : {}) };
}

/** The message as this node stores it, or undefined if none of its recipients lives here. */
export function localMessage(w: WireMessage, node: string, ev: RawEvent, room: string): Message | undefined {
  const recipients = w.to.filter((q) => nodeOf(q) === node).map((q) => localize(q, node));
  if (recipients.length === 0) return undefined;
  return {
    id: w.id,
    seq: 0,
    from: w.from,
    address: w.to.map((q) => localize(q, node)),
    recipients,
    thread: w.thread,
    replyTo: w.reply_to,
    body: w.body,
    attachments: w.attachments,
    requiresAck: w.requires_ack,
    slaMs: w.sla_ms,
    ttlMs: w.ttl_ms,
    sentAt: w.sent_at,
    sentBySession: w.session,
    node: w.node,
    origin: { room, eventId: ev.event_id, sender: ev.sender },
  };
}

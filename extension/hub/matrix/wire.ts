// How bus data looks in the Matrix room, and back. Handoffs and receipts are m.room.message
// events with a plain-text body a person can read in any client (Element on a phone), plus the
// structured data hubs read. Receipts relate to their handoff with m.reference. Names on the wire
// are always qualified (`name@node`); each hub drops its own qualifier when it reads them.
// Everything read here came from the network: it is validated field by field, never trusted.
import { MESSAGE_ID_PATTERN, IDENTITY_PATTERN } from '../bus/identity';
import type { Attachment, Message, OutboxEntry, Receipt } from '../bus/model';
import { localize, qualify } from '../bus/relay';
import type { RawEvent } from './homeserver';

export const MESSAGE_TYPE = 'm.room.message';
export const HANDOFF_KEY = 'org.handoff.message';
export const RECEIPT_KEY = 'org.handoff.receipt';
/** Room state, one per node (state_key = node): the identities that node hosts. */
export const NODE_STATE = 'org.handoff.node';
const MAX_BODY_BYTES = 64 * 1024;
const READABLE_CHARS = 2000;

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
}

export interface WireReceipt {
  message_id: string;
  /** The handoff's sender, qualified: the hub that should take the receipt. */
  sender: string;
  kind: Receipt['kind'];
  by: string;
  session: string;
  node: string;
  at: number;
  outcome?: Receipt['outcome'];
  summary?: string;
}

export interface Announcement {
  node: string;
  identities: { name: string; roles: string[] }[];
}

function oneLine(s: string, max: number): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The event an outbox entry becomes. A pure function of the entry: every retry sends the same bytes. */
export function outboxEvent(entry: OutboxEntry, node: string): { type: string; content: Record<string, unknown> } {
  const item = entry.item;
  if (item.kind === 'message') {
    const m = item.message;
    const wire: WireMessage = {
      id: m.id, from: qualify(m.from, node), to: m.recipients.map((r) => qualify(r, node)), thread: m.thread, reply_to: m.replyTo,
      body: m.body, attachments: m.attachments, requires_ack: m.requiresAck, sla_ms: m.slaMs, ttl_ms: m.ttlMs,
      sent_at: m.sentAt, session: m.sentBySession, node,
    };
    const ask = m.requiresAck ? ' (needs an ACK)' : '';
    // The readable copy is cut short: the event must stay under the homeserver's 64 KiB limit.
    const text = m.body.length > READABLE_CHARS ? `${m.body.slice(0, READABLE_CHARS)}… (${m.body.length} characters in all)` : m.body;
    const body = `Handoff from ${wire.from} to ${wire.to.join(', ')}${ask}:\n\n${text}\n\n— handoff ${m.id}, thread ${m.thread}`;
    return { type: MESSAGE_TYPE, content: { msgtype: 'm.text', body, [HANDOFF_KEY]: wire } };
  }
  const r = item.receipt;
  const wire: WireReceipt = {
    message_id: item.messageId, sender: item.sender, kind: r.kind, by: qualify(r.by, node), session: r.session, node,
    at: r.at, outcome: r.outcome, summary: r.summary,
  };
  const what = r.kind === 'read' ? 'read' : r.kind === 'ack' ? 'ACKed' : `reported ${r.outcome}${r.summary ? `: ${oneLine(r.summary, 300)}` : ''} on`;
  const content: Record<string, unknown> = {
    msgtype: 'm.notice',
    body: `${wire.by} ${what} handoff ${item.messageId} from ${item.sender}`,
    [RECEIPT_KEY]: wire,
  };
  if (item.refEventId) content['m.relates_to'] = { rel_type: 'm.reference', event_id: item.refEventId };
  return { type: MESSAGE_TYPE, content };
}

export function announcement(node: string, identities: Announcement['identities']): Record<string, unknown> {
  return { node, identities };
}

const str = (v: unknown, max = 1024): v is string => typeof v === 'string' && v.length <= max;
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const qualified = (v: unknown): v is string => str(v, 200) && IDENTITY_PATTERN.test(v) && v.includes('@');

function nodeOf(name: string): string {
  return name.slice(name.indexOf('@') + 1);
}

function attachments(v: unknown): Attachment[] | undefined {
  if (!Array.isArray(v) || v.length > 32) return undefined;
  const out: Attachment[] = [];
  for (const a of v as Record<string, unknown>[]) {
    if (!a || !str(a.path) || !str(a.sha256, 64) || !num(a.bytes)) return undefined;
    out.push({ path: a.path, sha256: a.sha256, bytes: a.bytes });
  }
  return out;
}

/** A handoff from the wire, or why it is unusable. Its `from` must be a name on the node it claims. */
export function readMessage(content: Record<string, unknown>): WireMessage | string {
  const w = content[HANDOFF_KEY] as Record<string, unknown> | undefined;
  if (!w || typeof w !== 'object') return 'no handoff data';
  if (!str(w.id) || !MESSAGE_ID_PATTERN.test(w.id)) return 'bad id';
  if (!qualified(w.from) || !str(w.node, 128) || nodeOf(w.from) !== w.node) return 'bad from/node';
  if (!Array.isArray(w.to) || w.to.length === 0 || w.to.length > 64 || !w.to.every(qualified)) return 'bad to';
  if (!str(w.thread, 200) || (w.reply_to !== undefined && !(str(w.reply_to) && MESSAGE_ID_PATTERN.test(w.reply_to)))) return 'bad thread/reply_to';
  if (typeof w.body !== 'string' || !w.body.trim() || Buffer.byteLength(w.body) > MAX_BODY_BYTES) return 'bad body';
  const att = attachments(w.attachments ?? []);
  if (!att) return 'bad attachments';
  if (typeof w.requires_ack !== 'boolean' || !num(w.sla_ms) || !num(w.ttl_ms) || !num(w.sent_at) || !str(w.session, 200)) return 'bad fields';
  return {
    id: w.id, from: w.from, to: w.to as string[], thread: w.thread, reply_to: w.reply_to as string | undefined, body: w.body,
    attachments: att, requires_ack: w.requires_ack, sla_ms: w.sla_ms, ttl_ms: w.ttl_ms, sent_at: w.sent_at, session: w.session, node: w.node,
  };
}

/** The message as this node stores it, or undefined if none of its recipients lives here. */
export function localMessage(w: WireMessage, node: string, ev: RawEvent, room: string): Message | undefined {
  const recipients = w.to.filter((q) => nodeOf(q) === node).map((q) => localize(q, node));
  if (recipients.length === 0) return undefined;
  return {
    id: w.id, seq: 0, from: w.from, address: w.to.map((q) => localize(q, node)), recipients, thread: w.thread, replyTo: w.reply_to,
    body: w.body, attachments: w.attachments, requiresAck: w.requires_ack, slaMs: w.sla_ms, ttlMs: w.ttl_ms,
    sentAt: w.sent_at, sentBySession: w.session, node: w.node, origin: { room, eventId: ev.event_id, sender: ev.sender },
  };
}

/** A receipt from the wire, or why it is unusable. Only its recipient's node may write it (G3). */
export function readReceipt(content: Record<string, unknown>): WireReceipt | string {
  const w = content[RECEIPT_KEY] as Record<string, unknown> | undefined;
  if (!w || typeof w !== 'object') return 'no receipt data';
  if (!str(w.message_id) || !MESSAGE_ID_PATTERN.test(w.message_id)) return 'bad message_id';
  if (!qualified(w.sender) || !qualified(w.by) || !str(w.node, 128) || nodeOf(w.by) !== w.node) return 'bad sender/by/node';
  if (w.kind !== 'read' && w.kind !== 'ack' && w.kind !== 'result') return 'bad kind';
  if (w.kind === 'result' && w.outcome !== 'done' && w.outcome !== 'stuck' && w.outcome !== 'rejected') return 'bad outcome';
  if (!str(w.session, 200) || !num(w.at) || (w.summary !== undefined && !str(w.summary, 8192))) return 'bad fields';
  return {
    message_id: w.message_id, sender: w.sender, kind: w.kind, by: w.by, session: w.session, node: w.node, at: w.at,
    outcome: w.outcome as WireReceipt['outcome'], summary: w.summary as string | undefined,
  };
}

export function readAnnouncement(ev: RawEvent): Announcement | string {
  const c = ev.content;
  if (!str(c.node, 128) || c.node !== ev.state_key) return 'bad node';
  if (!Array.isArray(c.identities) || c.identities.length > 1000) return 'bad identities';
  const identities: Announcement['identities'] = [];
  for (const i of c.identities as Record<string, unknown>[]) {
    if (!i || !str(i.name, 64) || !IDENTITY_PATTERN.test(i.name) || i.name.includes('@')) return 'bad identity name';
    const roles = Array.isArray(i.roles) ? i.roles.filter((r): r is string => str(r, 64)).slice(0, 16) : [];
    identities.push({ name: i.name, roles });
  }
  return { node: c.node, identities };
}

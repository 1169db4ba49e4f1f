// Derived views of the bus: the pending ledger, what is overdue, coverage and ghosts, and the
// timer-driven events (chase once past the SLA, dead-letter after the TTL). All plain functions.
import type {
  Coverage,
  LedgerEntry,
  LedgerRecipient,
  OverdueSummary,
  PersonInboxItem,
  PersonPresence,
  RecipientOutcome,
  RelayOutcome,
  SendResult,
} from '../../protocol/views';
import { bodyOf } from './body';
import type { BusEvent, BusState, Delivery, HotMessage, Message } from './model';
import { escalate, isEscalationDue, type EscalationContext } from './escalate';
import { isRemote } from './relay';
import { sessionLabel } from '../presence/sessions';
import { awaitingAck, isUnread } from './deliveryState';

/** The first time the delivery entered a model's context, if it has. */
export function firstSurfacing(d: Delivery) {
  return d.surfacings?.[0];
}

/** How many distinct sessions a delivery was pushed to. */
export function sessionsReached(d: Delivery): number {
  return new Set(d.pushes.map((p) => p.session)).size;
}

export function isOverdue(hot: HotMessage, d: Delivery, now: number): boolean {
  return hot.message.requiresAck && !hot.resolution && awaitingAck(d) && now > hot.message.sentAt + hot.message.slaMs;
}

export function preview(body: string, max = 120): string {
  const line = body.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function ledgerEntry(hot: HotMessage, now: number): LedgerEntry {
  const m = hot.message;
  const facts = ledgerFacts(hot);
  const recipients = Object.values(hot.deliveries).map((d): LedgerRecipient => {
    const last = d.receipts[d.receipts.length - 1];
    const first = firstSurfacing(d);
    return {
      recipient: d.recipient,
      state: d.state,
      sessionsPushed: sessionsReached(d),
      lastReceipt: last && {
        kind: last.kind,
        by: last.by,
        session: sessionLabel(last.session),
        node: last.node,
        at: last.at,
        channel: last.channel,
        outcome: last.outcome,
        // A result's summary, cut for the row; the message document has it whole.
        summary: last.summary && preview(last.summary, 160),
      },
      surfaced: first && {
        session: sessionLabel(first.session),
        node: first.node,
        at: first.at,
        path: first.path,
        via: first.via,
      },
      woken: d.wakes?.at(-1) && {
        at: d.wakes.at(-1)!.at,
        how: d.wakes.at(-1)!.how,
        terminal: d.wakes.at(-1)!.terminal,
      },
      awaitingAck: m.requiresAck && !hot.resolution && awaitingAck(d),
      failure: d.failure?.reason,
      chasedAt: d.chasedAt,
      escalated: d.escalated,
      overdue: isOverdue(hot, d, now),
    };
  });
  return {
    id: m.id,
    seq: m.seq,
    from: m.from,
    thread: m.thread,
    preview: preview(bodyOf(m)),
    sentAt: m.sentAt,
    dueAt: m.sentAt + m.slaMs,
    requiresAck: m.requiresAck,
    recipients,
    overdue: recipients.some((r) => r.overdue),
    deadLettered: facts.deadLettered,
    resolved: !!hot.resolution,
    pending: facts.pending,
    awaitingAck: facts.awaitingAck,
  };
}

export interface LedgerFacts {
  /** On its sender's pending ledger: not done by every recipient, not resolved, and (without an ACK asked) not yet everywhere. */
  pending: boolean;
  /** Some recipient has still to ACK it. */
  awaitingAck: boolean;
  /** A delivery failed and no person has resolved it. */
  deadLettered: boolean;
  /** The recipients who still owe the ACK it asks for (undefined: none). */
  owing?: string[];
}

/** What the ledger asks of an open message, from one walk of its deliveries: the index asks it of every message of every commit. */
export function ledgerFacts(hot: HotMessage): LedgerFacts {
  const open = !hot.resolution;
  const asked = hot.message.requiresAck && open;
  let allDone = true;
  let queuedOrFailed = false;
  let failed = false;
  let owing: string[] | undefined;
  for (const r in hot.deliveries) {
    const d = hot.deliveries[r];
    if (d.state !== 'done') allDone = false;
    if (d.state === 'failed') failed = queuedOrFailed = true;
    else if (d.state === 'queued') queuedOrFailed = true;
    if (asked && awaitingAck(d)) (owing ??= []).push(d.recipient);
  }
  return {
    pending: open && !allDone && (hot.message.requiresAck || queuedOrFailed),
    awaitingAck: owing !== undefined,
    deadLettered: open && failed,
    owing,
  };
}

export const isPending = (hot: HotMessage): boolean => ledgerFacts(hot).pending;
export const isAwaitingAck = (hot: HotMessage): boolean => ledgerFacts(hot).awaitingAck;
const isDeadLettered = (hot: HotMessage): boolean => ledgerFacts(hot).deadLettered;

/** Overdue or dead-lettered: what the status bar warns about and a person may chase or resolve. */
function needsAttention(hot: HotMessage, now: number): boolean {
  return isDeadLettered(hot) || Object.values(hot.deliveries).some((d) => isOverdue(hot, d, now));
}

/** Of these open messages, the ones not fully done, as ledger entries, oldest first: a sender's pending ledger. */
export function pendingLedger(open: Iterable<HotMessage>, now: number): LedgerEntry[] {
  const out: LedgerEntry[] = [];
  for (const hot of open) if (isPending(hot)) out.push(ledgerEntry(hot, now));
  return out.sort((a, b) => a.sentAt - b.sentAt || a.seq - b.seq);
}

/** Past their SLA without a recipient ACK, or dead-lettered and not yet resolved by a person; at most `cap` ids, oldest first (LedgerIndex keeps it as the journal moves). */
export function overdue(state: BusState, now: number, cap = Infinity): OverdueSummary {
  const late: HotMessage[] = [];
  for (const hot of Object.values(state.hot)) if (isPending(hot) && needsAttention(hot, now)) late.push(hot);
  late.sort((a, b) => a.message.sentAt - b.message.sentAt);
  return {
    count: late.length,
    oldestSentAt: late[0]?.message.sentAt,
    ids: late.slice(0, cap).map((h) => h.message.id),
  };
}

function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : Math.round((s[mid - 1] + s[mid]) / 2);
}

/** How many open handoffs wait for each identity's ACK, counted from the state (LedgerIndex keeps it). */
function unackedCounts(state: BusState): (identity: string) => number {
  const unacked = new Map<string, number>();
  for (const h of Object.values(state.hot)) {
    if (h.resolution || !h.message.requiresAck) continue;
    for (const d of Object.values(h.deliveries))
      if (awaitingAck(d)) unacked.set(d.recipient, (unacked.get(d.recipient) ?? 0) + 1);
  }
  return (identity) => unacked.get(identity) ?? 0;
}

export function coverage(
  state: BusState,
  liveSessions: (identity: string) => number,
  now: number,
  person: (identity: string) => PersonPresence | undefined = () => undefined,
  unacked = unackedCounts(state),
): Coverage[] {
  const names = new Set([...Object.keys(state.identities), ...Object.keys(state.coverage)]);
  return [...names].sort().map((identity) => {
    const c = state.coverage[identity] ?? { addressed: 0, acked: 0, ackLatencies: [] };
    const live = liveSessions(identity);
    const waiting = unacked(identity);
    const there = person(identity);
    const lastSeen =
      live > 0 || there?.live
        ? now
        : Math.max(state.identities[identity]?.lastSeen ?? 0, there?.lastFocusedAt ?? 0) || undefined;
    return {
      identity,
      addressed: c.addressed,
      acked: c.acked,
      medianAckMs: median(c.ackLatencies),
      lastSeen,
      liveSessions: live,
      unacked: waiting,
      ghost: waiting > 0 && live === 0 && !there?.live && !isRemote(identity),
      remote: isRemote(identity),
      ...(there ? { person: there } : {}),
    };
  });
}

/**
 * Timer events due now for one message: one chase per overdue delivery, one escalation
 * (escalate.ts) per chased delivery still silent a period later, and a visible dead-letter for
 * deliveries unacked past their TTL.
 */
export function dueEventsOf(hot: HotMessage, now: number, escalation?: EscalationContext): BusEvent[] {
  const events: BusEvent[] = [];
  const m = hot.message;
  if (hot.resolution || !m.requiresAck) return events;
  for (const d of Object.values(hot.deliveries)) {
    if (!awaitingAck(d)) continue;
    if (now > m.sentAt + m.ttlMs) {
      events.push({
        type: 'failed',
        id: m.id,
        recipient: d.recipient,
        reason: `dead-lettered: no ACK within the TTL of ${Math.round(m.ttlMs / 1000)} s`,
        at: now,
      });
    } else if (now > m.sentAt + m.slaMs && d.chasedAt === undefined) {
      events.push({ type: 'chased', id: m.id, recipient: d.recipient, at: now });
    } else if (escalation && isEscalationDue(hot, d, now)) {
      events.push(...escalate(hot, d, now, escalation));
    }
  }
  return events;
}

/** A recipient of a send just committed: pushed if some live session of it here was written to, else queued. */
export function newRecipientOutcome(
  identity: string,
  sessions: number,
  seenWhen: RecipientOutcome['seen_when'],
): RecipientOutcome {
  return { identity, state: sessions > 0 ? 'pushed' : 'queued', sessions, seen_when: seenWhen };
}

/** The honest answer to a send: `pushed` only if some live session here was written to, `relayed` if only the homeserver has it. */
export function sendResult(m: Message, local: RecipientOutcome[], relay?: RelayOutcome): SendResult {
  const recipients = local.map((r) => remoteOutcome(r, relay));
  return {
    message_id: m.id,
    seq: m.seq,
    thread: m.thread,
    state: recipients.some((r) => r.sessions > 0)
      ? 'pushed'
      : recipients.some((r) => r.state === 'relayed')
        ? 'relayed'
        : 'queued',
    recipients,
    ...(relay ? { relay } : {}),
  };
}

/** A recipient on another node: its own state from the relay, until its node's receipts say more. */
function remoteOutcome(r: RecipientOutcome, relay?: RelayOutcome): RecipientOutcome {
  if (!isRemote(r.identity) || r.state !== 'queued' || !relay) return r;
  if (relay.state === 'on_homeserver') return { ...r, state: 'relayed', event_id: relay.event_id };
  if (relay.state === 'in_their_hub') return { ...r, state: 'relayed' };
  return { ...r, state: relay.state === 'refused' ? 'failed' : 'in_outbox' };
}

/** A delivery as a sender reads it: one to another node that its node has not reported on yet is `relayed` once the homeserver has it. */
export function deliveryState(d: Delivery, relayed?: { eventId: string; at: number }): Delivery['state'] | 'relayed' {
  return isRemote(d.recipient) && d.state === 'queued' && relayed ? 'relayed' : d.state;
}

/** How many of a person's open handoffs the editor lists. */
export const PERSON_INBOX = 100;

/** A person's inbox as the editor lists it: their open mail, newest first (MailIndex.newestFor picks it). */
export function personInbox(newestFirst: HotMessage[], identity: string): PersonInboxItem[] {
  return newestFirst.map((hot) => {
    const m = hot.message;
    const d = hot.deliveries[identity];
    return {
      id: m.id,
      from: m.from,
      thread: m.thread,
      replyTo: m.replyTo,
      preview: preview(bodyOf(m)),
      sentAt: m.sentAt,
      state: d.state,
      unread: isUnread(d),
      requiresAck: m.requiresAck,
      dueAt: m.sentAt + m.slaMs,
      ...(m.escalation ? { escalation: m.escalation } : {}),
    };
  });
}

/** Timer events due now across the whole state (the hub's tick asks its DueIndex instead). */
export function dueEvents(state: BusState, now: number, escalation?: EscalationContext): BusEvent[] {
  return Object.values(state.hot).flatMap((hot) => dueEventsOf(hot, now, escalation));
}

// Derived views of the bus: the pending ledger, what is overdue, coverage and ghosts, and the
// timer-driven events (chase once past the SLA, dead-letter after the TTL). All plain functions.
import type { BusEvent, BusState, Delivery, DeliveryState, HotMessage } from './model';
import { isRemote } from './relay';

export interface LedgerRecipient {
  recipient: string;
  state: DeliveryState;
  sessionsPushed: number;
  lastReceipt?: { kind: string; by: string; session: string; node: string; at: number; outcome?: string };
  /** When the handoff first entered the recipient model's context, in which session and how. */
  surfaced?: { session: string; node: string; at: number; path: string; via: string };
  /** No recipient ACK (or result) yet. */
  awaitingAck: boolean;
  failure?: string;
  chasedAt?: number;
  overdue: boolean;
}

export interface LedgerEntry {
  id: string;
  from: string;
  thread: string;
  preview: string;
  sentAt: number;
  dueAt: number;
  requiresAck: boolean;
  recipients: LedgerRecipient[];
  overdue: boolean;
  deadLettered: boolean;
  resolved: boolean;
}

export function awaitingAck(d: Delivery): boolean {
  return d.state === 'queued' || d.state === 'pushed' || d.state === 'surfaced' || d.state === 'read';
}

/** Not yet read by the recipient (it may have surfaced in its model's context). */
export function isUnread(d: Delivery): boolean {
  return d.state === 'queued' || d.state === 'pushed' || d.state === 'surfaced';
}

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
  const recipients = Object.values(hot.deliveries).map((d): LedgerRecipient => {
    const last = d.receipts[d.receipts.length - 1];
    const first = firstSurfacing(d);
    return {
      recipient: d.recipient,
      state: d.state,
      sessionsPushed: sessionsReached(d),
      lastReceipt: last && { kind: last.kind, by: last.by, session: last.session, node: last.node, at: last.at, outcome: last.outcome },
      surfaced: first && { session: first.session, node: first.node, at: first.at, path: first.path, via: first.via },
      awaitingAck: m.requiresAck && !hot.resolution && awaitingAck(d),
      failure: d.failure?.reason,
      chasedAt: d.chasedAt,
      overdue: isOverdue(hot, d, now),
    };
  });
  return {
    id: m.id,
    from: m.from,
    thread: m.thread,
    preview: preview(m.body),
    sentAt: m.sentAt,
    dueAt: m.sentAt + m.slaMs,
    requiresAck: m.requiresAck,
    recipients,
    overdue: recipients.some((r) => r.overdue),
    deadLettered: !hot.resolution && Object.values(hot.deliveries).some((d) => d.state === 'failed'),
    resolved: !!hot.resolution,
  };
}

/** The sender's open items: anything it sent that is not fully done, oldest first. */
export function pendingLedger(state: BusState, now: number, from?: string): LedgerEntry[] {
  const out: LedgerEntry[] = [];
  for (const hot of Object.values(state.hot)) {
    if (from !== undefined && hot.message.from !== from) continue;
    if (hot.resolution) continue;
    const ds = Object.values(hot.deliveries);
    if (ds.every((d) => d.state === 'done')) continue;
    if (!hot.message.requiresAck && ds.every((d) => d.state !== 'queued' && d.state !== 'failed')) continue;
    out.push(ledgerEntry(hot, now));
  }
  return out.sort((a, b) => a.sentAt - b.sentAt);
}

export interface Overdue {
  count: number;
  oldestSentAt?: number;
  items: LedgerEntry[];
}

/** Past their SLA without a recipient ACK, or dead-lettered and not yet resolved by a person. */
export function overdue(state: BusState, now: number): Overdue {
  const items = pendingLedger(state, now).filter((e) => e.overdue || e.deadLettered);
  return { count: items.length, oldestSentAt: items[0]?.sentAt, items };
}

export interface Coverage {
  identity: string;
  addressed: number;
  acked: number;
  medianAckMs?: number;
  lastSeen?: number;
  liveSessions: number;
  unacked: number;
  /** Unacked mail and no live session: someone is waiting on an agent that is not there. */
  ghost: boolean;
  /** On another node (`name@node`): its sessions live there, so this hub cannot call it a ghost. */
  remote: boolean;
}

function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : Math.round((s[mid - 1] + s[mid]) / 2);
}

export function coverage(state: BusState, liveSessions: (identity: string) => number, now: number): Coverage[] {
  const unacked = new Map<string, number>();
  for (const h of Object.values(state.hot)) {
    if (h.resolution || !h.message.requiresAck) continue;
    for (const d of Object.values(h.deliveries)) if (awaitingAck(d)) unacked.set(d.recipient, (unacked.get(d.recipient) ?? 0) + 1);
  }
  const names = new Set([...Object.keys(state.identities), ...Object.keys(state.coverage)]);
  return [...names].sort().map((identity) => {
    const c = state.coverage[identity] ?? { addressed: 0, acked: 0, ackLatencies: [] };
    const live = liveSessions(identity);
    const waiting = unacked.get(identity) ?? 0;
    return {
      identity,
      addressed: c.addressed,
      acked: c.acked,
      medianAckMs: median(c.ackLatencies),
      lastSeen: live > 0 ? now : state.identities[identity]?.lastSeen,
      liveSessions: live,
      unacked: waiting,
      ghost: waiting > 0 && live === 0 && !isRemote(identity),
      remote: isRemote(identity),
    };
  });
}

/**
 * Timer events due now for one message: one chase per overdue delivery (then escalation is the
 * editor's and `handoff status`'s job), and a visible dead-letter for deliveries unacked past their TTL.
 */
export function dueEventsOf(hot: HotMessage, now: number): BusEvent[] {
  const events: BusEvent[] = [];
  const m = hot.message;
  if (hot.resolution || !m.requiresAck) return events;
  for (const d of Object.values(hot.deliveries)) {
    if (!awaitingAck(d)) continue;
    if (now > m.sentAt + m.ttlMs) {
      events.push({ type: 'failed', id: m.id, recipient: d.recipient, reason: `dead-lettered: no ACK within the TTL of ${Math.round(m.ttlMs / 1000)} s`, at: now });
    } else if (now > m.sentAt + m.slaMs && d.chasedAt === undefined) {
      events.push({ type: 'chased', id: m.id, recipient: d.recipient, at: now });
    }
  }
  return events;
}

/** Timer events due now across the whole state (the hub's tick asks its DueIndex instead). */
export function dueEvents(state: BusState, now: number): BusEvent[] {
  return Object.values(state.hot).flatMap((hot) => dueEventsOf(hot, now));
}

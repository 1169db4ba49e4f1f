// Escalation, the step after the chase (DESIGN "chases once past an SLA, then escalates to a
// human"): a delivery chased and still unacknowledged one more SLA period later escalates once,
// as a new handoff to a person that names the silent recipient. Plain functions over data.
import { awaitingAck } from './deliveryState';
import { bodyOf } from './body';
import type { BusEvent, BusState, Delivery, HotMessage, Message, StoredMessage } from './model';

/** What the timer needs to escalate: whom to (per handoff, else the hub's person) and fresh ids. */
export interface EscalationContext {
  /** The person a sender's unanswered handoffs escalate to; undefined: nobody to tell yet. */
  person: () => string | undefined;
  newId: () => string;
  nextSeq: () => number;
  node: string;
}

/** How much of the unanswered body the escalation quotes (the full message stays one click away). */
const QUOTE_CHARS = 2000;

/** Chased, one more SLA period gone, still no ACK, not escalated yet; an escalation never escalates. */
export function isEscalationDue(hot: HotMessage, d: Delivery, now: number): boolean {
  const m = hot.message;
  return (
    m.requiresAck &&
    !m.escalation &&
    !hot.resolution &&
    awaitingAck(d) &&
    d.chasedAt !== undefined &&
    d.escalated === undefined &&
    now > d.chasedAt + m.slaMs
  );
}

export function escalationBody(m: StoredMessage, silent: string, chasedAt: number): string {
  const body = bodyOf(m);
  const quoted = body.length > QUOTE_CHARS ? `${body.slice(0, QUOTE_CHARS)}… (cut; open ${m.id} for all of it)` : body;
  return [
    `Escalation: ${silent} has not acknowledged a handoff from ${m.from}.`,
    `Sent ${new Date(m.sentAt).toISOString()} with an SLA of ${Math.round(m.slaMs / 1000)} s, chased ${new Date(chasedAt).toISOString()}, still no ACK.`,
    `Handoff ${m.id}:`,
    '',
    quoted,
  ].join('\n');
}

/**
 * The escalation of one silent delivery: the `escalated` mark and the escalation handoff itself,
 * committed together. Nothing when there is nobody to escalate to, or only the silent one itself.
 */
export function escalate(hot: HotMessage, d: Delivery, now: number, ctx: EscalationContext): BusEvent[] {
  const m = hot.message;
  const to = m.escalateTo ?? ctx.person();
  if (!to || to === d.recipient || d.chasedAt === undefined) return [];
  const id = ctx.newId();
  const message: Message = {
    id,
    seq: ctx.nextSeq(),
    from: m.from,
    address: [to],
    recipients: [to],
    thread: m.thread,
    replyTo: m.id,
    // Due when the silent handoff would be dead-lettered: the person has until then, and a short
    // SLA must not make the escalation itself overdue (and notify) a moment after it arrives.
    body: escalationBody(m, d.recipient, d.chasedAt),
    attachments: [],
    requiresAck: true,
    slaMs: Math.max(1000, m.sentAt + m.ttlMs - now),
    ttlMs: m.ttlMs,
    sentAt: now,
    sentBySession: `escalation@${ctx.node}`,
    node: ctx.node,
    escalation: { of: m.id, silent: d.recipient },
  };
  return [
    { type: 'escalated', id: m.id, recipient: d.recipient, to, at: now, messageId: id },
    { type: 'sent', message },
  ];
}

/**
 * The silent recipient answered after all (an ACK or a result, not a mere read): its escalation,
 * if still open, is closed in the same journal record, with a note, so the person is not left
 * chasing what is already handled. `state` is before `events` apply.
 */
export function answeredEscalations(state: BusState, events: readonly BusEvent[]): BusEvent[] {
  const out: BusEvent[] = [];
  for (const e of events) {
    if (e.type !== 'receipt' || e.receipt.kind === 'read') continue;
    const escalated = state.hot[e.id]?.deliveries[e.recipient]?.escalated;
    const escalation = escalated && state.hot[escalated.messageId];
    if (!escalation || escalation.resolution) continue;
    const answer = e.receipt.kind === 'ack' ? 'acknowledged' : `reported it ${e.receipt.outcome ?? 'done'}`;
    out.push({
      type: 'resolved',
      id: escalated.messageId,
      resolution: {
        by: e.recipient,
        at: e.receipt.at,
        note: `${e.recipient} ${answer} after it was escalated: nothing left to chase.`,
      },
    });
  }
  return out;
}

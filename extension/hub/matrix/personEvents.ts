// What a person's events in the room mean for the bus, decided over the state: a reply (or
// thread reply) to a handoff is a handoff from that person to the handoff's sender; a reaction
// or a short reply (see person.ts) by a recipient is its receipt. Only handoffs this node sent
// are answered here — each hub takes the answers to its own identities' handoffs.
import { createHash } from 'node:crypto';
import type { BusEvent, BusState, HotMessage, Message, ReceiptKind, Outcome } from '../bus/model';
import { isRemote } from '../bus/relay';
import type { DropReason } from './drops';
import { personCommand, personIdentity } from './person';
import type { RawEvent, Reply } from './wire';

export interface PeopleContext {
  state: BusState;
  room: string;
  defaultSlaMs: number;
  defaultTtlMs: number;
  /** Open handoffs carried by a room event, sent from this node. */
  handoffsAt(eventId: string): HotMessage[];
}

export type PersonOutcome = { events: BusEvent[] } | { drop: DropReason; why: string };

const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A message id (ULID) fixed by the event: ingesting the event again finds the same id. */
export function eventMessageId(at: number, seed: string): string {
  let time = '';
  for (let x = Math.floor(at), i = 0; i < 10; i++, x = Math.floor(x / 32)) time = B32[x % 32] + time;
  const bits = [...createHash('sha256').update(seed).digest().subarray(0, 10)]
    .map((b) => b.toString(2).padStart(8, '0'))
    .join('');
  let rand = '';
  for (let i = 0; i < 80; i += 5) rand += B32[parseInt(bits.slice(i, i + 5), 2)];
  return time + rand;
}

function named(ev: RawEvent): string | PersonOutcome {
  return (
    personIdentity(ev.sender) ?? {
      drop: 'person_unnamed',
      why: `${ev.sender} cannot be written as an identity name (letters, digits, '.', '_', '-'), so the bus cannot address it`,
    }
  );
}

function known(ctx: PeopleContext, person: string, ev: RawEvent, events: BusEvent[]): void {
  if (!ctx.state.identities[person])
    events.push({ type: 'identity', name: person, at: ev.origin_server_ts, roles: ['person'] });
}

function receipts(
  ctx: PeopleContext,
  person: string,
  ev: RawEvent,
  handoffs: HotMessage[],
  kind: ReceiptKind,
  outcome?: Outcome,
  summary?: string,
): PersonOutcome {
  const session = `matrix ${ev.event_id}`;
  const events: BusEvent[] = [];
  known(ctx, person, ev, events);
  for (const h of handoffs) {
    const d = h.deliveries[person];
    if (d.receipts.some((r) => r.session === session && r.kind === kind)) continue; // taken before
    events.push({
      type: 'receipt',
      id: h.message.id,
      recipient: person,
      receipt: {
        kind,
        by: person,
        session,
        node: person.slice(person.indexOf('@') + 1),
        at: ev.origin_server_ts,
        channel: 'remote',
        outcome,
        summary,
      },
    });
  }
  return { events };
}

function localHandoffs(ctx: PeopleContext, targets: string[]): HotMessage[] {
  for (const t of targets) {
    const found = ctx.handoffsAt(t).filter((h) => !isRemote(h.message.from));
    if (found.length) return found;
  }
  return [];
}

export function personReply(ctx: PeopleContext, ev: RawEvent, reply: Reply): PersonOutcome {
  const person = named(ev);
  if (typeof person !== 'string') return person;
  const handoffs = localHandoffs(ctx, reply.targets);
  if (handoffs.length === 0)
    return {
      drop: 'not_for_this_node',
      why: `it answers ${reply.targets[0]}, which carries no open handoff sent from this node`,
    };
  const command = personCommand(reply.text);
  const mine = handoffs.filter((h) => h.deliveries[person]);
  if (command && mine.length) {
    return command.kind === 'ack'
      ? receipts(ctx, person, ev, mine, 'ack')
      : receipts(ctx, person, ev, mine, 'result', command.outcome, command.summary);
  }
  // An answer: to each sender of the handoffs answered (a batch event may carry several), in its thread.
  const latest = new Map<string, HotMessage>();
  for (const h of handoffs)
    if ((latest.get(h.message.from)?.message.seq ?? -1) < h.message.seq) latest.set(h.message.from, h);
  const events: BusEvent[] = [];
  known(ctx, person, ev, events);
  for (const [sender, h] of latest) {
    const message: Message = {
      id: eventMessageId(ev.origin_server_ts, `${ev.event_id}\n${sender}`),
      seq: 0,
      from: person,
      address: [sender],
      recipients: [sender],
      thread: h.message.thread,
      replyTo: h.message.id,
      body: reply.text,
      attachments: [],
      requiresAck: true,
      slaMs: ctx.defaultSlaMs,
      ttlMs: ctx.defaultTtlMs,
      sentAt: ev.origin_server_ts,
      sentBySession: `matrix ${ev.event_id}`,
      node: person.slice(person.indexOf('@') + 1),
      origin: { room: ctx.room, eventId: ev.event_id, sender: ev.sender },
    };
    events.push({ type: 'sent', message });
  }
  return { events };
}

export function personReaction(
  ctx: PeopleContext,
  ev: RawEvent,
  target: string,
  meaning: 'ack' | 'read',
): PersonOutcome {
  const person = named(ev);
  if (typeof person !== 'string') return person;
  const handoffs = localHandoffs(ctx, [target]);
  if (handoffs.length === 0)
    return {
      drop: 'not_for_this_node',
      why: `it reacts to ${target}, which carries no open handoff sent from this node`,
    };
  const mine = handoffs.filter((h) => h.deliveries[person]);
  if (mine.length === 0)
    return {
      drop: 'not_a_recipient',
      why: `${person} is not a recipient of ${handoffs.map((h) => h.message.id).join(', ')}; only a recipient writes its receipt`,
    };
  return receipts(ctx, person, ev, mine, meaning);
}

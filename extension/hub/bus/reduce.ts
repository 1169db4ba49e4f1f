// How each journal event changes the bus state. Deterministic: no clock, no I/O — recovery
// replays the journal through this same function and must land on the same state.
import { appendTo, compactMessage, newDelivery } from './compact';
import { asDict, dict } from './dict';
import {
  RESEND_PREFIX,
  type BusEvent,
  type BusState,
  type Delivery,
  type DeliveryState,
  type HotMessage,
  type OutboxEntry,
  type RelayState,
} from './model';

const ACK_LATENCY_SAMPLES = 200;

const TERMINAL = 5;
const RANK: Record<DeliveryState, number> = {
  queued: 0,
  pushed: 1,
  surfaced: 2,
  read: 3,
  acked: 4,
  done: TERMINAL,
  stuck: TERMINAL,
  failed: TERMINAL,
};

export function isTerminal(state: DeliveryState): boolean {
  return RANK[state] === TERMINAL;
}

/** Moves a delivery forward only; receipts arriving out of order never move it back. */
function advance(delivery: Delivery, to: DeliveryState): void {
  if (!isTerminal(delivery.state) && RANK[to] > RANK[delivery.state]) delivery.state = to;
}

function countAck(state: BusState, hot: HotMessage, delivery: Delivery, at: number): void {
  if (delivery.receipts.some((r) => r.kind === 'ack' || r.kind === 'result')) return; // first one only
  const c = (state.coverage[delivery.recipient] ??= { addressed: 0, acked: 0, ackLatencies: [] });
  c.acked++;
  c.ackLatencies.push(Math.max(0, at - hot.message.sentAt));
  if (c.ackLatencies.length > ACK_LATENCY_SAMPLES) c.ackLatencies.shift();
}

function relayOf(state: BusState): RelayState {
  return (state.relay ??= { outbox: dict(), queued: 0, rooms: dict() });
}

/** The batch an outbox entry belongs to, if any. */
export function batchOf(relay: RelayState, txnId: string): string | undefined {
  for (const [batch, members] of Object.entries(relay.batches ?? {})) if (members.includes(txnId)) return batch;
  return undefined;
}

/** Removes an entry — or every member of a batch — from the outbox, and returns them. */
function takeEntries(state: BusState, txnId: string): OutboxEntry[] {
  const relay = state.relay;
  if (!relay) return [];
  const members = relay.batches?.[txnId];
  if (members) delete relay.batches![txnId];
  const out: OutboxEntry[] = [];
  for (const t of members ?? [txnId]) {
    const entry = relay.outbox[t];
    if (!entry) continue;
    delete relay.outbox[t];
    out.push(entry);
  }
  return out;
}

/**
 * The open message an event changes, noted in `changed`: the next checkpoint writes those anew
 * and copies every other line as it stands (store/checkpointFile.ts), so each change to a hot
 * message must come through here.
 */
/** Told of each open message just before an event changes it. */
export interface ChangeNote {
  add(id: string): unknown;
}

function changing(state: BusState, id: string, changed?: ChangeNote): HotMessage | undefined {
  const hot = state.hot[id];
  if (hot) changed?.add(id);
  return hot;
}

/** Applies one event in place, noting in `changed` the open messages it changed. Events for messages no longer hot (archived) are ignored. */
export function apply(state: BusState, event: BusEvent, changed?: ChangeNote): void {
  switch (event.type) {
    case 'identity': {
      const known = state.identities[event.name];
      if (known) {
        known.lastSeen = Math.max(known.lastSeen, event.at);
        known.roles = event.roles;
      } else {
        state.identities[event.name] = {
          name: event.name,
          firstSeen: event.at,
          lastSeen: event.at,
          roles: event.roles,
        };
      }
      return;
    }
    case 'sent': {
      // A copy of its own: the hot set's messages change in place (a checkpoint leaves their bodies
      // in its file, bus/body.ts), and the event's message lives on in the journal batch and the outbox.
      const m = compactMessage({ ...event.message });
      state.seq = Math.max(state.seq, m.seq);
      // Built whole, then given no prototype: a dict filled key by key is a slow dictionary three times the size.
      const deliveries = asDict(Object.fromEntries(m.recipients.map((r): [string, Delivery] => [r, newDelivery(r)])));
      for (const r of m.recipients) {
        const c = (state.coverage[r] ??= { addressed: 0, acked: 0, ackLatencies: [] });
        c.addressed++;
      }
      // Not noted in `changed`: its body is in memory until a checkpoint writes it, so that checkpoint writes its line anew.
      state.hot[m.id] = { message: m, deliveries };
      if (m.idempotencyKey) state.idempotency[`${m.from}\n${m.idempotencyKey}`] = { id: m.id, at: m.sentAt };
      return;
    }
    case 'pushed': {
      const d = changing(state, event.id, changed)?.deliveries[event.recipient];
      if (!d) return;
      d.pushes = appendTo(d.pushes, event.push);
      advance(d, 'pushed');
      return;
    }
    case 'offered': {
      const d = changing(state, event.id, changed)?.deliveries[event.recipient];
      if (d && d.offeredAt === undefined) d.offeredAt = event.at;
      return;
    }
    case 'surfaced': {
      const d = changing(state, event.id, changed)?.deliveries[event.recipient];
      if (!d) return;
      (d.surfacings ??= []).push(event.surfacing);
      advance(d, 'surfaced');
      return;
    }
    case 'woken': {
      const d = changing(state, event.id, changed)?.deliveries[event.recipient];
      if (d) (d.wakes ??= []).push(event.wake);
      return;
    }
    case 'receipt': {
      const hot = changing(state, event.id, changed);
      const d = hot?.deliveries[event.recipient];
      if (!hot || !d) return;
      const r = event.receipt;
      if (r.kind === 'ack' || r.kind === 'result') countAck(state, hot, d, r.at);
      d.receipts = appendTo(d.receipts, r);
      if (r.kind === 'read') advance(d, 'read');
      else if (r.kind === 'ack') advance(d, 'acked');
      else if (r.outcome === 'rejected') {
        if (!isTerminal(d.state)) {
          d.state = 'failed';
          d.failure = { reason: `rejected by ${r.by}: ${r.summary ?? ''}`.trim(), at: r.at };
        }
      } else advance(d, r.outcome === 'stuck' ? 'stuck' : 'done');
      return;
    }
    case 'failed': {
      const d = changing(state, event.id, changed)?.deliveries[event.recipient];
      if (!d || isTerminal(d.state)) return;
      d.state = 'failed';
      d.failure = { reason: event.reason, at: event.at };
      return;
    }
    case 'chased': {
      const d = changing(state, event.id, changed)?.deliveries[event.recipient];
      if (d) d.chasedAt = event.at;
      return;
    }
    case 'escalated': {
      const d = changing(state, event.id, changed)?.deliveries[event.recipient];
      if (d) d.escalated = { to: event.to, at: event.at, messageId: event.messageId };
      return;
    }
    case 'resolved': {
      const hot = changing(state, event.id, changed);
      if (hot) hot.resolution = event.resolution;
      return;
    }
    case 'outboxed': {
      const relay = relayOf(state);
      if (relay.outbox[event.txnId]) return;
      relay.outbox[event.txnId] = { txnId: event.txnId, order: relay.queued++, queuedAt: event.at, item: event.item };
      return;
    }
    case 'relayed': {
      for (const entry of takeEntries(state, event.txnId)) {
        const hot = entry.item.kind === 'message' ? changing(state, entry.item.message.id, changed) : undefined;
        if (hot) hot.relayed = { eventId: event.eventId, at: event.at };
      }
      return;
    }
    case 'relay-failed': {
      for (const entry of takeEntries(state, event.txnId)) {
        if (entry.item.kind !== 'message') continue;
        const hot = changing(state, entry.item.message.id, changed);
        for (const d of Object.values(hot?.deliveries ?? {})) {
          if (!d.recipient.includes('@') || isTerminal(d.state)) continue;
          d.state = 'failed';
          d.failure = { reason: event.reason, at: event.at };
        }
      }
      return;
    }
    case 'batched': {
      const relay = relayOf(state);
      const members = event.members.filter((t) => relay.outbox[t] && !batchOf(relay, t));
      if (members.length > 0) (relay.batches ??= dict())[event.txnId] = members;
      return;
    }
    case 'unbatched': {
      if (state.relay?.batches) delete state.relay.batches[event.txnId];
      return;
    }
    case 'node-bound': {
      const nodes = (relayOf(state).nodes ??= dict());
      const known = nodes[event.node];
      // First claim wins; a conflict is never journaled. A node bound before keys existed gets its key once.
      if (!known) nodes[event.node] = { user: event.user, at: event.at, ...(event.key ? { key: event.key } : {}) };
      else if (known.user === event.user && !known.key && event.key) known.key = event.key;
      return;
    }
    case 'synced': {
      const relay = relayOf(state);
      relay.since = event.since;
      if (event.room && event.lastEventId) relay.rooms[event.room] = { lastEventId: event.lastEventId };
      return;
    }
  }
}

/**
 * A message leaves the hot document when nothing more is expected of it: every delivery is
 * done, a person resolved it, or (no ACK required) every recipient was reached. Failed and
 * stuck deliveries stay until a person resolves them — a dead letter must stay visible. An
 * ACKed message that never reports a result settles after its TTL so the hot set stays bounded.
 */
export function isSettled(hot: HotMessage, now: number): boolean {
  if (hot.resolution) return true;
  return Object.values(hot.deliveries).every((d) => {
    if (d.state === 'done') return true;
    if (d.state === 'failed' || d.state === 'stuck') return false;
    if (!hot.message.requiresAck && d.state !== 'queued') return true;
    if (d.state === 'acked') {
      const ackAt = d.receipts.find((r) => r.kind === 'ack')?.at ?? hot.message.sentAt;
      return now - ackAt > hot.message.ttlMs;
    }
    return false;
  });
}

/** A bridge sends a call again within seconds of the first attempt; an hour is ample. */
const RESEND_WINDOW_MS = 60 * 60_000;

/** Drops idempotency keys older than the window (resend keys after an hour); called at checkpoints. */
export function pruneIdempotency(state: BusState, now: number, windowMs: number): void {
  for (const [k, v] of Object.entries(state.idempotency)) {
    if (now - v.at > (k.includes(`\n${RESEND_PREFIX}`) ? RESEND_WINDOW_MS : windowMs)) delete state.idempotency[k];
  }
}

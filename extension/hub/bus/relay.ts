// What the bus owes other nodes: which events go out over Matrix, decided over the state before
// they are committed, so the outbox entry is durable in the same journal record as the send (G1).
// Names: a local identity has no `@`; a remote one is `name@node`, `node` being its hub's name.
import { messageIdOf, type BusEvent, type BusState } from './model';

export function isRemote(name: string): boolean {
  return name.includes('@');
}

/** The name as another node sees it: local names get this node's qualifier. */
export function qualify(name: string, node: string): string {
  return isRemote(name) ? name : `${name}@${node}`;
}

/** The name as this node sees it: its own qualifier is dropped. */
export function localize(name: string, node: string): string {
  const own = `@${node}`;
  return name.endsWith(own) ? name.slice(0, -own.length) : name;
}

export function messageTxnId(id: string): string {
  return `handoff.${id}`;
}

/** Outbox entries for the events about to be committed: sends to remote recipients, and local
 * recipients' receipts for messages that came from another node — with the first push and the
 * first surfacing of each, so the sender's ledger tells `pushed` from merely relayed. */
export function outboxFor(state: BusState, events: BusEvent[]): BusEvent[] {
  const out: BusEvent[] = [];
  let told: Set<string> | undefined; // only a remote sender's mail needs one
  for (const e of events) {
    if (e.type === 'pushed' || e.type === 'surfaced') {
      const hot = state.hot[e.id];
      const d = hot?.deliveries[e.recipient];
      const m = hot?.message;
      if (!m || !d || !isRemote(m.from) || isRemote(e.recipient) || !m.origin) continue;
      const first = e.type === 'pushed' ? d.pushes.length === 0 : (d.surfacings ?? []).length === 0;
      const key = `${e.type}\n${e.id}\n${e.recipient}`;
      if (!first || told?.has(key)) continue;
      (told ??= new Set()).add(key);
      const step = e.type;
      const { session, node, at } = e.type === 'pushed' ? e.push : e.surfacing;
      out.push({
        type: 'outboxed',
        txnId: `${step}.${e.id}.${e.recipient}`,
        at,
        item: {
          kind: 'progress',
          messageId: e.id,
          sender: m.from,
          refEventId: m.origin.eventId,
          step,
          recipient: e.recipient,
          session,
          node,
          at,
          ...(e.type === 'surfaced' ? { path: e.surfacing.path, via: e.surfacing.via } : {}),
        },
      });
      continue;
    }
    if (e.type === 'sent' && e.message.recipients.some(isRemote) && !e.message.origin) {
      out.push({
        type: 'outboxed',
        txnId: messageTxnId(e.message.id),
        at: e.message.sentAt,
        item: { kind: 'message', message: e.message },
      });
    } else if (e.type === 'receipt' && !isRemote(e.receipt.by)) {
      const m = state.hot[e.id]?.message;
      if (!m || !isRemote(m.from)) continue;
      const r = e.receipt;
      out.push({
        type: 'outboxed',
        txnId: `receipt.${e.id}.${r.by}.${r.kind}.${r.at}`,
        at: r.at,
        item: { kind: 'receipt', messageId: e.id, sender: m.from, refEventId: m.origin?.eventId, receipt: r },
      });
    }
  }
  return out;
}

/**
 * The messages a run of events changes, read before they are applied: a relay's success or failure
 * names only its outbox entry (or batch), yet marks the messages in it relayed, or fails their
 * remote deliveries.
 */
export function messagesTouched(state: BusState, events: BusEvent[]): string[] {
  const ids: string[] = [];
  for (const e of events) {
    const id = messageIdOf(e);
    if (id !== undefined) ids.push(id);
    if ((e.type !== 'relay-failed' && e.type !== 'relayed') || !state.relay) continue;
    for (const t of state.relay.batches?.[e.txnId] ?? [e.txnId]) {
      const item = state.relay.outbox[t]?.item;
      if (item?.kind === 'message') ids.push(item.message.id);
    }
  }
  return ids;
}

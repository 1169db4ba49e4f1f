// Repositories on this machine linked to this one (hub/link/): which of them an outbox entry goes
// to, and what a linked hub's delivery becomes on this bus. A linked repository's identities are
// `name@repo`; a name without `@` is always this repository's. The linked hub is authenticated by
// the transport (its node key); here, it speaks only for its own repository's names (G3).
import type { BusEvent, BusState, Message, OutboxEntry } from './model';
import { isRemote } from './relay';
import { remoteReceiptEvent, type RemoteReceipt } from './remoteReceipt';

export function qualifierOf(name: string): string | undefined {
  const at = name.indexOf('@');
  return at < 0 ? undefined : name.slice(at + 1);
}

/** The repository (or node) an outbox entry is for: a handoff's remote recipients', a receipt's sender's. */
export function destinationOf(entry: OutboxEntry): string | undefined {
  const item = entry.item;
  if (item.kind === 'message') {
    const remote = item.message.recipients.find(isRemote);
    return remote ? qualifierOf(remote) : undefined;
  }
  return qualifierOf(item.sender);
}

/** The entries waiting for one destination, oldest first (FIFO per sender→recipient). */
export function outboxFor(state: BusState, destination: string): OutboxEntry[] {
  return Object.values(state.relay?.outbox ?? {})
    .filter((e) => destinationOf(e) === destination)
    .sort((a, b) => a.order - b.order);
}

/** Remote recipients that are not all in one place: one outbox entry goes to one destination. */
export function mixedDestinations(recipients: readonly string[], linked: ReadonlySet<string>): string[] | undefined {
  const places = new Set(recipients.filter(isRemote).map((r) => qualifierOf(r)!));
  if (places.size < 2 || ![...places].some((p) => linked.has(p))) return undefined;
  return [...places];
}

/** A delivered item, translated by the transport: a handoff as this node stores it, or a receipt. */
export type LinkedItem = { kind: 'message'; message: Message } | { kind: 'receipt'; wire: RemoteReceipt };

/**
 * One delivered item as bus events (none when it is already here: ingest is idempotent by
 * message id, receipts by kind, session and time), or why it is refused. `peer` is the
 * authenticated repository: it speaks only for its own names. `pending`: what earlier items of
 * the same delivery already added.
 */
export function takeLinked(
  state: BusState,
  item: LinkedItem,
  own: string,
  peer: string,
  knows: (id: string) => boolean,
  pending: Set<string>,
): BusEvent[] | string {
  if (item.kind === 'message') {
    const m = item.message;
    if (m.node !== peer || qualifierOf(m.from) !== peer)
      return `handoff ${m.id} claims a sender of another repository (${m.from}, node ${m.node}) than ${peer}`;
    if (m.recipients.length === 0) return `handoff ${m.id} has no recipient in ${own}`;
    if (pending.has(m.id) || knows(m.id)) return [];
    pending.add(m.id);
    return [{ type: 'sent', message: m }];
  }
  const w = item.wire;
  if (w.node !== peer || qualifierOf(w.by) !== peer)
    return `a ${w.kind} receipt by ${w.by} (node ${w.node}), who is not of ${peer}`;
  const key = `${w.message_id}\n${w.by}\n${w.kind}\n${w.session}\n${w.at}`;
  if (pending.has(key)) return [];
  const e = remoteReceiptEvent(state, w, own, `linked repository ${peer}`);
  if (e === 'not_a_recipient') return `${w.by} is not a recipient of ${w.message_id}`;
  if (!e) return [];
  pending.add(key);
  return [e];
}

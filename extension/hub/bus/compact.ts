// The hot set holds every open message for as long as it is open (100 000 of them must fit in
// 150 MB), so what recurs across messages is held once: the id string (the hot key, the thread of
// a new conversation), recipient lists (most mail goes to a few identities), the address when it
// is the recipient list, and empty lists. Same JSON out, same values in; fewer objects behind them.
import type { Delivery, HotMessage, Message } from './model';

/**
 * The one empty list every empty `pushes`, `receipts` and `attachments` points to. Frozen: the
 * reducer appends with `appendTo`, which replaces it, and anything that pushed onto it in place
 * would throw rather than write into every message at once.
 */
const NONE = Object.freeze([]) as unknown as never[];

/** Appends in place, or replaces the shared empty list with a list of its own. */
export function appendTo<T>(list: T[], item: T): T[] {
  if (list === NONE) return [item];
  list.push(item);
  return list;
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Distinct lists of names, frozen like NONE; bounded, since names come and go. */
const lists = new Map<string, string[]>();
/** Lists of one name, by the name: most mail has one recipient, and its key then needs no JSON. */
const singles = new Map<string, string[]>();
const MAX_LISTS = 1024;

/** The one frozen copy of a list of names (recipients, an address, who still owes an ACK). */
export function sharedList(list: string[]): string[] {
  if (list.length === 0) return NONE;
  if (list.length === 1) {
    let one = singles.get(list[0]);
    if (one) return one;
    if (singles.size >= MAX_LISTS) singles.clear();
    singles.set(list[0], (one = Object.freeze([list[0]]) as string[]));
    return one;
  }
  const key = JSON.stringify(list); // unambiguous whatever a remote node put in an address
  let shared = lists.get(key);
  if (shared) return shared;
  if (lists.size >= MAX_LISTS) lists.clear();
  shared = Object.freeze([...list]) as string[];
  lists.set(key, shared);
  return shared;
}

/** `id`: the message's id as a string already held (the hot key), to share. */
export function compactMessage<M extends Omit<Message, 'body'>>(m: M, id = m.id): M {
  if (m.id === id) m.id = id;
  if (m.thread === m.id) m.thread = m.id;
  m.recipients = sharedList(m.recipients);
  m.address = sameList(m.address, m.recipients) ? m.recipients : sharedList(m.address);
  if (m.attachments.length === 0) m.attachments = NONE;
  return m;
}

export function compactDelivery(d: Delivery): Delivery {
  if (d.pushes.length === 0) d.pushes = NONE;
  if (d.receipts.length === 0) d.receipts = NONE;
  return d;
}

export function newDelivery(recipient: string): Delivery {
  return { recipient, state: 'queued', pushes: NONE, receipts: NONE };
}

export function compactHot<T extends HotMessage>(hot: T, id?: string): T {
  compactMessage(hot.message, id);
  for (const r in hot.deliveries) compactDelivery(hot.deliveries[r]);
  return hot;
}

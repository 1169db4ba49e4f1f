// What a history search asks and what a message must be to answer it: plain functions over
// messages, the same for open ones in the hot set and settled ones read back from history.
// A message's terms are its words and, behind a byte no word holds, its sender, recipients,
// addresses and thread: a segment's index lists them all, so a search by any of them reads only
// the messages that carry the term (store/segmentIndex.ts).
import type { Delivery, Message } from './model';
import { mayRead } from './mayRead';
import type { SearchQuery } from '../../protocol/views';

/** A search as the bus runs it: the protocol's query, and whose eyes it is for. */
export interface HistoryQuery extends SearchQuery {
  /** Only what this identity may read (bus/mayRead.ts): the mail it sent or was a recipient of. */
  viewer?: { identity: string };
}

/** What a term index holds of a message, before it is cut to the index's width. */
const FIELD = '\u0001';

export const fieldTerm = {
  from: (name: string) => `${FIELD}f:${name}`,
  to: (name: string) => `${FIELD}t:${name}`,
  address: (address: string) => `${FIELD}a:${address}`,
  thread: (thread: string) => `${FIELD}h:${thread}`,
};

export function words(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[\p{L}\p{N}_]{2,64}/gu) ?? [])];
}

/** Every term of a message, once each. */
export function termsOf(m: Pick<Message, 'from' | 'recipients' | 'address' | 'thread' | 'body'>): string[] {
  return [
    ...words(m.body),
    fieldTerm.from(m.from),
    ...m.recipients.map(fieldTerm.to),
    ...m.address.map(fieldTerm.address),
    fieldTerm.thread(m.thread),
  ];
}

/**
 * The groups of terms a match must carry, one term of each group at least: what an index narrows
 * the search to before a message is read. Empty: every message is a candidate.
 */
export function termGroups(q: HistoryQuery): string[][] {
  const groups: string[][] = [];
  if (q.viewer) groups.push([fieldTerm.from(q.viewer.identity), fieldTerm.to(q.viewer.identity)]);
  for (const w of words(q.text ?? '')) groups.push([w]);
  if (q.from) groups.push([fieldTerm.from(q.from)]);
  if (q.to) groups.push([fieldTerm.to(q.to)]);
  if (q.thread) groups.push([fieldTerm.thread(q.thread)]);
  return groups;
}

/** Whether a message (its body as text) answers the query; `settled`: read from history, not open. */
export function matches(q: HistoryQuery, m: Message, deliveries: Record<string, Delivery>, settled: boolean): boolean {
  if (q.viewer && !mayRead(m, q.viewer.identity)) return false;
  if (q.from && m.from !== q.from) return false;
  if (q.to && !m.recipients.includes(q.to)) return false;
  if (q.thread && m.thread !== q.thread) return false;
  if (q.since !== undefined && m.sentAt < q.since) return false;
  if (q.until !== undefined && m.sentAt >= q.until) return false;
  if (q.state) {
    const ok =
      q.state === 'settled'
        ? settled
        : q.state === 'open'
          ? !settled
          : Object.values(deliveries).some((d) => d.state === q.state);
    if (!ok) return false;
  }
  const wanted = words(q.text ?? '');
  if (wanted.length > 0) {
    const has = new Set(words(m.body));
    if (!wanted.every((w) => has.has(w))) return false;
  }
  return true;
}

// What a history search asks and what a message must be to answer it: plain functions over
// messages, the same for open ones in the hot set and settled ones read back from history.
// A message's terms are its words and, behind a byte no word holds, its sender, recipients,
// addresses and thread: a segment's index lists them all, so a search by any of them reads only
// the messages that carry the term (store/segmentIndex.ts).
import type { Delivery, Message } from './model';
import { mayRead } from './mayRead';
import type { SearchQuery } from '../../protocol/views';
import { porterStem } from './porter';

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

/**
 * Text as a search compares it, as SQLite FTS5's unicode61 tokenizer does: compatibility forms
 * unfolded (NFKC: "ﬁ" is "fi"), accents and other combining marks dropped (a decomposed "Zürich" was
 * the words "zu" and "rich"; "café" composed missed it decomposed), and case folded ("İstanbul"
 * is "istanbul", "STRASSE" is "strasse" as "straße" is).
 */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC')
    .toUpperCase()
    .toLowerCase();
}

export function words(text: string): string[] {
  return [...new Set(fold(text).match(/[\p{L}\p{N}_]{2,64}/gu) ?? [])];
}

/** A query's word: its stem (what its forms share), and whether it ended in `*` (any word it begins). */
interface Wanted {
  word: string;
  stem: string;
  prefix: boolean;
  /**
   * How much of the word an index sealed by an earlier version spells the same: it kept words
   * only lowercased ("café", not "cafe"), so the lookup stops where folding changed a letter.
   */
  same: number;
}

function wantedWords(text: string): Wanted[] {
  const out = new Map<string, Wanted>();
  for (const token of text.split(/\s+/)) {
    const folded = fold(token);
    const before = token.normalize('NFC').toLowerCase();
    let differs = 0;
    while (differs < folded.length && folded[differs] === before[differs]) differs++;
    for (const m of folded.matchAll(/([\p{L}\p{N}_]{2,64})(\*?)/gu)) {
      const same = Math.max(0, Math.min(m[1].length, differs - m.index));
      out.set(m[0], { word: m[1], stem: porterStem(m[1]), prefix: m[2] === '*', same });
    }
  }
  return [...out.values()];
}

/**
 * What the index is asked for a query word: every term that begins so. A stem is not always the
 * start of its words ("happy" stems to "happi", "hoping" to "hope"): one letter less covers them;
 * the message read back is checked against the stem.
 */
function lookupPrefix(w: Wanted): string {
  const start = w.prefix ? w.word : w.stem.replace(/[ei]$/, '');
  let same = 0;
  while (same < start.length && same < w.same && start[same] === w.word[same]) same++;
  return w.word.slice(0, Math.max(same, 1));
}

/** Whether a message's words answer a query word: the same stem, or (`word*`) a word it begins. */
function answers(w: Wanted, body: Set<string>): boolean {
  if (body.has(w.word)) return true;
  for (const b of body)
    if (w.prefix ? b.startsWith(w.word) : b.startsWith(w.stem[0]) && porterStem(b) === w.stem) return true;
  return false;
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

/** A term as the index is asked for it: exactly, or every term that begins with `prefix`. */
export type TermKey = string | { prefix: string };

/**
 * The groups of terms a match must carry, one term of each group at least: what an index narrows
 * the search to before a message is read. Empty: every message is a candidate.
 */
export function termGroups(q: HistoryQuery): TermKey[][] {
  const groups: TermKey[][] = [];
  if (q.viewer) groups.push([fieldTerm.from(q.viewer.identity), fieldTerm.to(q.viewer.identity)]);
  for (const w of wantedWords(q.text ?? '')) groups.push([{ prefix: lookupPrefix(w) }]);
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
  const wanted = wantedWords(q.text ?? '');
  if (wanted.length > 0) {
    const has = new Set(words(m.body));
    if (!wanted.every((w) => answers(w, has))) return false;
  }
  return true;
}

// The Handoff view's search box, on the host side: the webview's request checked (it is untrusted
// input like any other), its text read as words and from: to: thread: state: filters, and the
// hub's hits turned into rows. The person sees every handoff, as `handoff search` without --as.
import { IDENTITY_PATTERN, MESSAGE_ID_PATTERN, NO_NUL_PATTERN } from '../../protocol/names';
import {
  SEARCH_LIMIT,
  SEARCH_TEXT_MAX,
  type SearchHitView,
  type SearchResultsView,
  type Tone,
} from '../../protocol/panel';
import { SEARCH_STATES, type SearchHit, type SearchQuery } from '../../protocol/views';
import { plural } from '../../shared/format';

/** A search request from the view, checked: its text within limits, its sequence number a plain count. */
export function searchRequest(m: unknown): { text: string; seq: number } | string {
  const r = m as { text?: unknown; seq?: unknown };
  if (typeof r?.text !== 'string') return 'a search needs its text';
  if (r.text.length > SEARCH_TEXT_MAX) return `a search is at most ${SEARCH_TEXT_MAX} characters`;
  if (!NO_NUL_PATTERN.test(r.text)) return 'a search cannot hold a NUL character';
  if (typeof r.seq !== 'number' || !Number.isSafeInteger(r.seq) || r.seq < 0) return 'a search needs its number';
  return { text: r.text, seq: r.seq };
}

const FILTERS = ['from', 'to', 'thread', 'state'] as const;
const STATES = new Set<string>(SEARCH_STATES);

/** The box's text as a query: `from:builder state:settled parser` is builder's settled handoffs with "parser". */
export function parseSearch(text: string): SearchQuery | string {
  const q: SearchQuery = { limit: SEARCH_LIMIT };
  const words: string[] = [];
  for (const token of text.trim().split(/\s+/).filter(Boolean)) {
    const m = /^([a-z]+):(.*)$/i.exec(token);
    const key = m?.[1].toLowerCase() as (typeof FILTERS)[number] | undefined;
    if (!m || !key || !FILTERS.includes(key)) {
      words.push(token);
      continue;
    }
    const value = m[2];
    if (!value) return `${key}: needs a value, e.g. ${key}:${key === 'state' ? 'settled' : 'builder'}`;
    if (q[key] !== undefined) return `${key}: is given twice`;
    if (key === 'state') {
      if (!STATES.has(value.toLowerCase())) return `state:${value} is not a state: one of ${SEARCH_STATES.join(', ')}`;
      q.state = value.toLowerCase() as SearchQuery['state'];
    } else if (key === 'thread') {
      if (value.length > 256) return 'thread: is at most 256 characters';
      q.thread = value;
    } else {
      if (!IDENTITY_PATTERN.test(value)) return `${key}:${value} is not an identity name`;
      q[key] = value;
    }
  }
  if (words.length) q.text = words.join(' ');
  return q;
}

/** A failure or a stuck recipient shows first; else settled, or still open. */
function look(h: SearchHit): { tone: Tone; icon: string } {
  const states = Object.values(h.states);
  if (states.includes('failed')) return { tone: 'error', icon: 'error' };
  if (states.includes('stuck')) return { tone: 'warn', icon: 'debug-pause' };
  return h.settled ? { tone: 'ok', icon: 'pass' } : { tone: 'info', icon: 'circle-large-outline' };
}

/** One hit as the view lists it: who to whom, when, what it says and how it stands. */
export function hitView(h: SearchHit): SearchHitView {
  const each = Object.entries(h.states)
    .map(([who, state]) => `${who} ${state}`)
    .join(', ');
  return {
    id: h.message_id,
    from: h.from,
    to: h.recipients,
    thread: h.thread,
    sentAt: h.sent_at,
    excerpt: h.excerpt,
    settled: h.settled,
    stateLabel: h.settled ? `settled · ${each}` : each,
    ...look(h),
  };
}

export function resultsView(seq: number, hits: SearchHit[]): SearchResultsView {
  const rows = hits.filter((h) => MESSAGE_ID_PATTERN.test(h.message_id)).map(hitView);
  const summary =
    rows.length === 0
      ? 'No handoff matches.'
      : rows.length >= SEARCH_LIMIT
        ? `The newest ${SEARCH_LIMIT} matches; add words or filters to narrow it.`
        : `${plural(rows.length, 'handoff')}, newest first.`;
  return { seq, hits: rows, summary };
}

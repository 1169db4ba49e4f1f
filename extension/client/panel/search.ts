// The Handoff view's search box, on the host side: the webview's request checked (it is untrusted
// input like any other), its text read as words and filters (shared/searchQuery.ts), and the
// hub's hits turned into rows. The person sees every handoff, as `handoff search` without --as.
import { MESSAGE_ID_PATTERN, NO_NUL_PATTERN } from '../../protocol/names';
import {
  SEARCH_LIMIT,
  SEARCH_TEXT_MAX,
  type SearchHitView,
  type SearchResultsView,
  type Tone,
} from '../../protocol/panel';
import type { SearchHit } from '../../protocol/views';
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

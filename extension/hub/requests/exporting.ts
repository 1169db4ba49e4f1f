// `handoff export`: history for keeping elsewhere, a page at a time over the control connection so
// that neither the hub nor the CLI ever holds it all. Settled handoffs in the order they settled
// (store/history.ts lines), then, if asked, the open ones by id (the order they were made); each
// page ends at a cursor the next request goes on from.
import { withBody } from '../bus/body';
import { matches, type HistoryQuery } from '../bus/historyQuery';
import type { Message, StoredMessage } from '../bus/model';
import type { Journal } from '../state/journal';
import type { ExportLine, ExportPage } from '../../protocol/views';

export interface ExportQuery {
  since?: number;
  until?: number;
  viewer?: HistoryQuery['viewer'];
  open?: boolean;
  after?: string;
  limit: number;
}

/** A page stops here, whatever its count: the control connection takes lines up to 1 MiB. */
const PAGE_BYTES = 512 * 1024;

/** `h:N:OFFSET` (history, segment N from byte OFFSET) or `o:ID` (the open ones after ID). */
function cursor(after: string | undefined): { n: number; offset: number } | { openAfter: string } {
  if (after === undefined) return { n: 0, offset: 0 };
  const h = /^h:(\d{1,9}):(\d{1,15})$/.exec(after);
  if (h) return { n: Number(h[1]), offset: Number(h[2]) };
  const o = /^o:([0-9A-Z]{0,26})$/.exec(after);
  if (o) return { openAfter: o[1] };
  throw new Error(`"${after}" is not an export cursor (it comes from the page before)`);
}

export async function exportPage(journal: Journal, q: ExportQuery): Promise<ExportPage> {
  const at = cursor(q.after);
  const lines: ExportLine[] = [];
  let bytes = 0;
  const full = (line: ExportLine) => {
    lines.push(line);
    bytes += line.message.body.length;
    return lines.length >= q.limit || bytes >= PAGE_BYTES;
  };
  const query: HistoryQuery = { since: q.since, until: q.until, viewer: q.viewer, limit: q.limit };
  const history = journal.history;
  let removed = 0;
  if ('n' in at && history) {
    // A sealed segment whose newest settled before `since` holds nothing sent since.
    const skip = (newestAt: number) => q.since !== undefined && newestAt > 0 && newestAt < q.since;
    const dropped = (k: number) => (removed += k);
    for await (const { value: a, next } of history.lines(at, skip, dropped)) {
      if (!matches(query, a.message, a.deliveries, true)) continue;
      const line = {
        message: a.message,
        deliveries: Object.values(a.deliveries),
        settled: true,
        resolution: a.resolution,
        relayed: a.relayed,
        archivedAt: a.archivedAt,
      };
      if (full(line)) return { lines, next: `h:${next.n}:${next.offset}`, ...(removed ? { removed } : {}) };
    }
  }
  const { hot } = journal.state;
  if (!q.open) {
    // The last page says how many open ones the range left out: "0 handoffs" when all were ACKed
    // but none had a result yet read as an empty history, not as "add --open".
    let openLeftOut = 0;
    for (const id of journal.openIds()) {
      const h = hot[id];
      if (h && matches(query, h.message as StoredMessage & Message, h.deliveries, false)) openLeftOut++;
    }
    return { lines, openLeftOut, ...(removed ? { removed } : {}) };
  }
  const after = 'openAfter' in at ? at.openAfter : '';
  // Sorted on every page: the open set is bounded by what is open, not by history.
  const ids: string[] = [];
  for (const id of journal.openIds()) if (id > after) ids.push(id);
  ids.sort();
  for (const id of ids) {
    const h = hot[id];
    if (!h || !matches(query, h.message as StoredMessage & Message, h.deliveries, false)) continue;
    const line = {
      message: withBody(h.message),
      deliveries: Object.values(h.deliveries),
      settled: false,
      resolution: h.resolution,
      relayed: h.relayed,
    };
    if (full(line)) return { lines, next: `o:${id}`, ...(removed ? { removed } : {}) };
  }
  return { lines, ...(removed ? { removed } : {}) };
}

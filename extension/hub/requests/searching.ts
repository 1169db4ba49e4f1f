// A search of the bus's history: the open handoffs in the hot set, then the settled ones in history
// (store/history.ts), newest first, each as a hit that names its id so get_message opens it.
import { withBody } from '../bus/body';
import { matches, type HistoryQuery } from '../bus/historyQuery';
import type { Delivery, Message, StoredMessage } from '../bus/model';
import type { Journal } from '../state/journal';
import type { SearchHit } from '../../protocol/views';

const EXCERPT = 160;

function hit(m: Message, deliveries: Record<string, Delivery>, settled: boolean): SearchHit {
  const states: SearchHit['states'] = {};
  for (const [who, d] of Object.entries(deliveries)) states[who] = d.state;
  return {
    message_id: m.id,
    from: m.from,
    recipients: m.recipients,
    thread: m.thread,
    sent_at: m.sentAt,
    settled,
    states,
    excerpt: m.body.replace(/\s+/g, ' ').slice(0, EXCERPT),
  };
}

export async function searchHistory(journal: Journal, q: HistoryQuery): Promise<SearchHit[]> {
  const open: SearchHit[] = [];
  const { hot } = journal.state;
  const withoutText = { ...q, text: undefined };
  for (const id of journal.openIds()) {
    const h = hot[id];
    // The body is read (from the checkpoint, maybe) only for a message every other term matched.
    if (!h || !matches(withoutText, h.message as StoredMessage & Message, h.deliveries, false)) continue;
    const m = withBody(h.message);
    if (q.text && !matches(q, m, h.deliveries, false)) continue;
    open.push(hit(m, h.deliveries, false));
  }
  open.sort((a, b) => b.sent_at - a.sent_at);
  const hits = open.slice(0, q.limit);
  if (hits.length < q.limit && q.state !== 'open')
    for (const a of await journal.searchArchived({ ...q, limit: q.limit - hits.length }))
      hits.push(hit(a.message, a.deliveries, true));
  return hits;
}

// The view's search box on the host side: the webview's request is checked like any untrusted
// input (a bad one is refused with a reason, never run), the box's text becomes a query of words
// and from: to: thread: state: filters, and hits become rows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hitView, resultsView, searchRequest } from '../../extension/client/panel/search';
import { parseSearch as parseWith } from '../../extension/shared/searchQuery';
import { SEARCH_LIMIT, SEARCH_TEXT_MAX } from '../../extension/protocol/panel';
import type { SearchHit } from '../../extension/protocol/views';

const parseSearch = (text: string) => parseWith(text, SEARCH_LIMIT);

const hit = (i: number, o: Partial<SearchHit> = {}): SearchHit => ({
  message_id: `01JD3V7W2K8Q5X9Y4Z${String(i).padStart(8, '0')}`,
  from: 'builder',
  recipients: ['reviewer'],
  thread: 't',
  sent_at: 1_800_000_000_000 + i,
  settled: true,
  states: { reviewer: 'done' },
  excerpt: `handoff ${i}`,
  ...o,
});

describe("the view's search box", () => {
  it('takes only a request with its text and number, within limits', () => {
    assert.deepEqual(searchRequest({ type: 'search', text: 'parser', seq: 3 }), { text: 'parser', seq: 3 });
    for (const bad of [
      undefined,
      null,
      'parser',
      { text: 42, seq: 1 },
      { text: 'x'.repeat(SEARCH_TEXT_MAX + 1), seq: 1 },
      { text: 'a\u0000b', seq: 1 },
      { text: 'parser' },
      { text: 'parser', seq: -1 },
      { text: 'parser', seq: 1.5 },
      { text: 'parser', seq: '1' },
    ])
      assert.equal(typeof searchRequest(bad), 'string', `refused: ${JSON.stringify(bad)}`);
  });

  it('reads words and from: to: thread: state: filters', () => {
    assert.deepEqual(parseSearch('  parser   error  '), { limit: SEARCH_LIMIT, text: 'parser error' });
    assert.deepEqual(parseSearch('from:builder To:reviewer thread:01ABC state:Settled streams'), {
      limit: SEARCH_LIMIT,
      from: 'builder',
      to: 'reviewer',
      thread: '01ABC',
      state: 'settled',
      text: 'streams',
    });
    assert.deepEqual(parseSearch('state:open'), { limit: SEARCH_LIMIT, state: 'open' });
    // A colon that is no filter is a word.
    assert.deepEqual(parseSearch('http://x note:1'), { limit: SEARCH_LIMIT, text: 'http://x note:1' });
  });

  it('says what is wrong with a filter instead of running it', () => {
    assert.match(parseSearch('state:late') as string, /state:late is not a state: one of queued, .*settled/);
    assert.match(parseSearch('from:') as string, /from: needs a value/);
    assert.match(parseSearch('from:a from:b') as string, /from: is given twice/);
    assert.match(parseSearch('to:<img>') as string, /to:<img> is not an identity name/);
    assert.match(parseSearch(`thread:${'t'.repeat(257)}`) as string, /at most 256/);
  });

  it('lists hits with who, whom, when, what and how it stands; a failure shows first', () => {
    assert.deepEqual(hitView(hit(1)), {
      id: hit(1).message_id,
      from: 'builder',
      to: ['reviewer'],
      thread: 't',
      sentAt: hit(1).sent_at,
      excerpt: 'handoff 1',
      settled: true,
      stateLabel: 'settled · reviewer done',
      tone: 'ok',
      icon: 'pass',
    });
    const failed = hitView(hit(2, { settled: false, recipients: ['a', 'b'], states: { a: 'acked', b: 'failed' } }));
    assert.deepEqual([failed.stateLabel, failed.tone, failed.icon], ['a acked, b failed', 'error', 'error']);
    assert.equal(hitView(hit(3, { settled: false, states: { reviewer: 'pushed' } })).tone, 'info');
  });

  it('sums up the results, and drops a hit whose id is no message id', () => {
    assert.equal(resultsView(1, []).summary, 'No handoff matches.');
    assert.equal(resultsView(1, [hit(1), hit(2)]).summary, '2 handoffs, newest first.');
    const full = Array.from({ length: SEARCH_LIMIT }, (_, i) => hit(i));
    assert.match(resultsView(1, full).summary, /^The newest 50 matches/);
    assert.deepEqual(
      resultsView(7, [hit(1), hit(2, { message_id: '"><img src=x>' })]).hits.map((h) => h.id),
      [hit(1).message_id],
    );
    assert.equal(resultsView(7, []).seq, 7);
  });
});

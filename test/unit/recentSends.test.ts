// The probable-duplicate memory: a hit is the same sender, recipients (in any order) and body,
// never merely the same 32-bit hash; forgetting and pruning leave the rest found.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RecentSends, type Sent } from '../../extension/hub/bus/recentSends';

const sent = (i: number, over: Partial<Sent> = {}): Sent => ({
  id: `id${i}`,
  from: 'alice',
  recipients: ['bob', 'carol'],
  body: `body ${i}`,
  sentAt: i,
  ...over,
});

describe('recent sends', () => {
  it('finds the same send only: sender, recipients in any order, body', () => {
    const r = new RecentSends();
    r.add(sent(1));
    assert.equal(r.find('alice', ['carol', 'bob'], 'body 1')?.id, 'id1');
    assert.equal(r.find('dave', ['bob', 'carol'], 'body 1'), undefined);
    assert.equal(r.find('alice', ['bob'], 'body 1'), undefined);
    assert.equal(r.find('alice', ['bob', 'carol'], 'body 2'), undefined);
  });

  it('a later send of the same body replaces the earlier; forgetting it forgets that body', () => {
    const r = new RecentSends();
    r.add(sent(1, { body: 'same' }));
    const forget = r.add(sent(2, { body: 'same' }));
    assert.equal(r.size, 1);
    assert.equal(r.find('alice', ['bob', 'carol'], 'same')?.id, 'id2');
    forget();
    assert.equal(r.find('alice', ['bob', 'carol'], 'same'), undefined);
    assert.equal(r.size, 0);
  });

  it('once stored, the slot holds the stored copy, not the draft (whose body would stay in memory for the window)', () => {
    const r = new RecentSends();
    const draft = sent(1);
    const fp = r.fingerprint(draft.from, draft.recipients, draft.body as string);
    r.add(draft, fp);
    const stored = { ...draft };
    r.stored(draft, stored, fp);
    assert.equal(r.find('alice', ['bob', 'carol'], 'body 1'), stored);
    assert.equal(r.size, 1);
  });

  it('200 000 sends (some sharing a hash) are each found, and pruning keeps exactly the recent ones', () => {
    const r = new RecentSends();
    const n = 200_000;
    for (let i = 0; i < n; i++) r.add(sent(i));
    assert.equal(r.size, n);
    for (let i = 0; i < n; i++) assert.equal(r.find('alice', ['bob', 'carol'], `body ${i}`)?.id, `id${i}`);
    r.prune((m) => m.sentAt < n / 2);
    assert.equal(r.size, n / 2);
    for (let i = 0; i < n; i++)
      assert.equal(r.find('alice', ['bob', 'carol'], `body ${i}`)?.id, i < n / 2 ? undefined : `id${i}`);
  });
});

// The probable-duplicate memory: a hit is the same sender, recipients (in any order) and body,
// never merely the same 32-bit hash; forgetting and pruning leave the rest found; no body is held,
// and the whole is bounded in bytes.
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

  it('holds no body: a 64 KiB body is forgotten once added, and a same-hash other body is not a hit', () => {
    const r = new RecentSends();
    const body = 'x'.repeat(65_536);
    r.add(sent(1, { body }));
    assert.equal(r.find('alice', ['bob', 'carol'], body)?.id, 'id1');
    assert.ok(!Object.values(r.find('alice', ['bob', 'carol'], body)!).includes(body));
    assert.ok(r.bytes < 1024, `one entry holds ${r.bytes} bytes`);
  });

  it('is bounded in bytes: past its budget the oldest sends are forgotten first', () => {
    const r = new RecentSends(64 * 1024);
    for (let i = 0; i < 10_000; i++) r.add(sent(i, { body: `${i} ${'y'.repeat(1000)}` }));
    assert.ok(r.bytes <= 64 * 1024, `${r.bytes} bytes held`);
    assert.ok(r.size > 100 && r.size < 10_000, `${r.size} held`);
    assert.equal(r.find('alice', ['bob', 'carol'], `0 ${'y'.repeat(1000)}`), undefined);
    assert.equal(r.find('alice', ['bob', 'carol'], `9999 ${'y'.repeat(1000)}`)?.id, 'id9999');
  });

  it('200 000 sends (some sharing a hash) are each found, and pruning keeps exactly the recent ones', () => {
    const r = new RecentSends(Infinity);
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

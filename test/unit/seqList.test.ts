// SeqList: seq order whatever the order of adds and deletes, walks that survive deleting what they
// yield, and holes squeezed out without losing an entry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bySeq, SeqList } from '../../extension/hub/bus/seqList';

const all = (l: SeqList, afterSeq?: number) => [...l.ids(afterSeq)];

describe('SeqList', () => {
  it('oldest first from a seq, newest first, an older id re-added in its place', () => {
    const l = new SeqList();
    for (const s of [1, 2, 4, 5]) l.add(`m${s}`, s);
    l.add('m3', 3);
    l.add('m2', 2); // already in: no change
    assert.deepEqual(all(l), ['m1', 'm2', 'm3', 'm4', 'm5']);
    assert.deepEqual(all(l, 3), ['m4', 'm5']);
    assert.deepEqual(
      [...l.newest()].map(([id]) => id),
      ['m5', 'm4', 'm3', 'm2', 'm1'],
    );
    assert.ok(l.has('m3', 3) && !l.has('m3', 4));
    assert.equal(l.size, 5);
  });

  it('a walk may delete what it yields, in either direction', () => {
    const l = new SeqList();
    for (let s = 1; s <= 10; s++) l.add(`m${s}`, s);
    const seen: string[] = [];
    for (const id of l.ids()) {
      seen.push(id);
      if (Number(id.slice(1)) % 2 === 0) l.delete(id, Number(id.slice(1)));
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 10 }, (_, i) => `m${i + 1}`),
    );
    assert.deepEqual(all(l), ['m1', 'm3', 'm5', 'm7', 'm9']);
    const back: string[] = [];
    for (const [id, seq] of l.newest()) {
      back.push(id);
      l.delete(id, seq);
    }
    assert.deepEqual(back, ['m9', 'm7', 'm5', 'm3', 'm1']);
    assert.equal(l.size, 0);
    assert.deepEqual(all(l), []);
  });

  it('10 000 entries, most deleted from the middle and the ends, then more added: nothing lost, order kept', () => {
    const l = new SeqList();
    const want = new Set<number>();
    for (let s = 1; s <= 10_000; s++) {
      l.add(`m${s}`, s);
      want.add(s);
    }
    for (let s = 1; s <= 10_000; s++) {
      if (s % 7 !== 0) {
        l.delete(`m${s}`, s);
        want.delete(s);
      }
    }
    for (let s = 10_001; s <= 10_100; s++) {
      l.add(`m${s}`, s);
      want.add(s);
    }
    assert.deepEqual(
      all(l),
      [...want].map((s) => `m${s}`),
    );
    assert.deepEqual(
      [...l.newest()].map(([id]) => id),
      [...want].reverse().map((s) => `m${s}`),
    );
    assert.ok(l.has('m7000', 7000));
    assert.equal(l.has('m7001', 7001), false);
    l.add('m7001', 7001); // an older message back in its place: into its hole
    l.add('m6999.5', 6999.5); // between two holes: inserted
    assert.deepEqual(all(l, 6998), [
      'm6999.5',
      'm7000',
      'm7001',
      ...[...want].filter((s) => s > 7001).map((s) => `m${s}`),
    ]);
  });

  it('two lists walked as one in seq order, from a seq; a walk left early still lets the lists squeeze', () => {
    const a = new SeqList();
    const b = new SeqList();
    for (const s of [1, 4, 5, 9]) a.add(`m${s}`, s);
    for (const s of [2, 3, 7]) b.add(`m${s}`, s);
    assert.deepEqual(
      [...bySeq(a, b)].map((e) => e.seq),
      [1, 2, 3, 4, 5, 7, 9],
    );
    assert.deepEqual(
      [...bySeq(a, undefined, 4)].map((e) => e.id),
      ['m5', 'm9'],
    );
    for (const e of bySeq(a, b)) if (e.seq === 3) break;
    for (let s = 10; s < 1000; s++) a.add(`m${s}`, s);
    for (let s = 10; s < 990; s++) a.delete(`m${s}`, s);
    assert.deepEqual(all(a, 989), ['m990', 'm991', 'm992', 'm993', 'm994', 'm995', 'm996', 'm997', 'm998', 'm999']);
    assert.ok((a as unknown as { order: unknown[] }).order.length < 100, 'holes squeezed out');
  });
});

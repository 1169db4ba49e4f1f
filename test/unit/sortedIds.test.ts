// SortedIds against a plain sorted array: random adds and deletes, enough of them that blocks
// split (past 512 entries) and empty again, and every way of reading it agrees.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SortedIds, type Keyed } from '../../extension/hub/bus/sortedIds';

const before = (a: Keyed, b: Keyed) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

function check(set: SortedIds, want: Keyed[], from: number): void {
  assert.equal(set.size, want.length);
  assert.equal(set.first()?.id, want[0]?.id);
  assert.equal((set.from(from).next().value as Keyed | undefined)?.id, want.find((x) => x.at >= from)?.id);
}

describe('SortedIds', () => {
  it('reads what a sorted array of the same entries reads, growing past several blocks and emptying', () => {
    // Unbiased: fast-check leans to small integers, and add = 0 (a delete) often enough would keep the set too small to split.
    const op = fc.noBias(
      fc.record({
        add: fc.integer({ min: 0, max: 3 }),
        at: fc.integer({ min: 0, max: 300 }),
        pick: fc.nat(),
        from: fc.integer({ min: -1, max: 301 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 3000, maxLength: 4000 }), (ops) => {
        const set = new SortedIds();
        const want: Keyed[] = [];
        let seq = 0;
        for (const o of ops) {
          if (o.add > 0 || want.length === 0) {
            const e = { id: `m${++seq}`, at: o.at, seq };
            set.add(e.id, e.at, e.seq);
            const i = want.findIndex((x) => before(e, x));
            want.splice(i < 0 ? want.length : i, 0, e);
          } else {
            const [e] = want.splice(o.pick % want.length, 1);
            set.delete(e.at, e.seq);
          }
          check(set, want, o.from);
        }
        assert.ok(want.length > 1024, `${want.length} entries: several blocks`);
        assert.deepEqual(
          [...set.from()].map((e) => e.id),
          want.map((e) => e.id),
        );
        assert.deepEqual(
          [...set.from(150)].map((e) => e.id),
          want.filter((e) => e.at >= 150).map((e) => e.id),
        );
        for (let k = 0; want.length > 0; k++) {
          const [e] = want.splice((k * 7919) % want.length, 1);
          set.delete(e.at, e.seq);
          if (k % 50 === 0) check(set, want, (k * 13) % 300);
        }
        assert.equal(set.size, 0);
        assert.deepEqual([...set.from()], []);
      }),
      { numRuns: 10 },
    );
  });
});

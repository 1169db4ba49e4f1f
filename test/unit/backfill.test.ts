// A backfill runs outside any call, a slice per turn: a visit that throws (a body the checkpoint
// cannot give back) is reported and passed over, never thrown where it would end the hub.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backfill, fillInTurns } from '../../extension/hub/state/backfill';

describe('backfill', () => {
  it('a visit that throws is reported and passed over; the rest are visited, the fill ends', async () => {
    const visited: string[] = [];
    const skipped: string[] = [];
    const ids = new Set(['a', 'b', 'c']);
    const fill = new Backfill(
      ids,
      (id) => {
        if (id === 'b') throw new Error('the checkpoint holds no message body at byte 90');
        visited.push(id);
        if (id === 'a') ids.add('d'); // a live view: ids added while filling are visited too
      },
      (id, e) => skipped.push(`${id}: ${e.message}`),
    );
    await fillInTurns([fill]).done;
    assert.deepEqual(visited, ['a', 'c', 'd']);
    assert.deepEqual(skipped, ['b: the checkpoint holds no message body at byte 90']);
    assert.equal(fill.complete, true);
  });
});

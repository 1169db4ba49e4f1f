// A body left in a checkpoint is held as a number naming its store and its byte offset there
// (bus/body.ts). Two stores in one process and offsets past 2 GiB must still name the right
// bytes of the right file; no test writes gigabytes, so this one reads through fake page sources.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyLiteral, closeBodyPages, registerBodyPages, type BodyPages } from '../../extension/hub/bus/body';

/** A page source that says which store was asked, and where. */
function pages(name: string): BodyPages {
  return { literal: (offset) => JSON.stringify(`${name}@${offset}`) };
}

describe('body references', () => {
  it('name the right store and offset past 2 GiB, with two stores open in the process', () => {
    const a = pages('a');
    const b = pages('b');
    const refsA = registerBodyPages(a); // registered one after the other: adjacent indexes
    const refsB = registerBodyPages(b);
    try {
      for (const offset of [0, 5, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 5, 3 * 2 ** 31 + 7, 2 ** 39]) {
        assert.equal(bodyLiteral(refsA.ref(offset)), JSON.stringify(`a@${offset}`), `a's body at ${offset}`);
        assert.equal(bodyLiteral(refsB.ref(offset)), JSON.stringify(`b@${offset}`), `b's body at ${offset}`);
        assert.equal(refsA.offsetOf(refsA.ref(offset)), offset, `a reads back its own ref at ${offset}`);
        assert.equal(refsA.offsetOf(refsB.ref(offset)), undefined, `a does not take b's ref at ${offset} as its own`);
        assert.equal(refsB.offsetOf(refsA.ref(offset)), undefined, `b does not take a's ref at ${offset} as its own`);
      }
    } finally {
      closeBodyPages(a);
      closeBodyPages(b);
    }
  });

  it('an offset no ref can address is refused, not folded into another store', () => {
    const a = pages('a');
    const refs = registerBodyPages(a);
    try {
      assert.throws(() => refs.ref(2 ** 40), /past the \d+ bytes a body reference can address/);
      assert.throws(() => refs.ref(-1), RangeError);
    } finally {
      closeBodyPages(a);
    }
  });
});

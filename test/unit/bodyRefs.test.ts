// A body left in a checkpoint is held as a number naming its store and its byte offset there
// (bus/body.ts). Two stores in one process and offsets past 2 GiB must still name the right
// bytes of the right file; no test writes gigabytes, so this one reads through fake page sources.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyLiteral, closeBodyPages, registerBodyPages, type BodyPages } from '../../extension/hub/bus/body';

/** A page source that says which store was asked, which of its files, and where. */
function pages(name: string): BodyPages {
  return { literal: (offset, file) => JSON.stringify(`${name}${file}@${offset}`) };
}

describe('body references', () => {
  it('name the right store and offset past 2 GiB, with two stores open in the process', () => {
    const a = pages('a');
    const b = pages('b');
    const refsA = registerBodyPages(a); // registered one after the other: adjacent indexes
    const refsB = registerBodyPages(b);
    try {
      for (const offset of [0, 5, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 5, 3 * 2 ** 31 + 7, 2 ** 39]) {
        assert.equal(bodyLiteral(refsA.ref(offset)), JSON.stringify(`a0@${offset}`), `a's body at ${offset}`);
        assert.equal(bodyLiteral(refsB.ref(offset)), JSON.stringify(`b0@${offset}`), `b's body at ${offset}`);
        // The second file of a store (checkpoints take turns between two).
        assert.equal(bodyLiteral(refsA.ref(offset, 1)), JSON.stringify(`a1@${offset}`), `a's second file at ${offset}`);
        assert.equal(bodyLiteral(refsB.ref(offset, 1)), JSON.stringify(`b1@${offset}`), `b's second file at ${offset}`);
        assert.equal(refsA.offsetOf(refsA.ref(offset, 1), 1), offset);
        assert.equal(refsA.offsetOf(refsA.ref(offset, 1), 0), undefined, "a's second file is not its first");
        assert.equal(refsA.offsetOf(refsA.ref(offset), 1), undefined, "a's first file is not its second");
        assert.equal(refsA.offsetOf(refsB.ref(offset, 1), 1), undefined, "a does not take b's second file as its own");
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

// Message ids: ULIDs from one monotonic factory. ulid's own randomness asks the CSPRNG once per
// character; drawing from a pool refilled 4 KiB at a time is the same randomness for a fraction of
// the calls (docs/performance.md, "Message ids").
import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

const pool = new Uint32Array(1024);
let next = pool.length;

/** Uniform in [0, 1), from the CSPRNG. */
function pooledRandom(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] / 0x1_0000_0000;
}

export function messageIds(): (now: number) => string {
  return monotonicFactory(pooledRandom);
}

// The hub process's V8 heap settings for a large hot set. Loading a store (everything parsed
// survives) and bursts of sends grow V8's young generation to its maximum, and nothing shrinks it
// back, busy or idle (docs/performance.md, "Young generation").
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Before the store loads: the young generation keeps its first size instead of doubling to 32 MB
 * whenever much survives (a large load, a burst of sends). Read at each growth, so it holds when
 * set at run time (the semi-space maximum does not).
 */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** Once the store is read (its indexes filled in): one last-resort collection gives back the pages reading it left free. */
export function shedLoadingMemory(): void {
  // The gc function exists only in a context made while --expose-gc is set; the hub's own has none.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options: object) => void;
  setFlagsFromString('--no-expose-gc');
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

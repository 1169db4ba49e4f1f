// An index over the open messages, filled in after start a slice per turn of the event loop, so
// neither the start nor any one call pays for all of it: at 100 000 open, the due times took
// 60–180 ms and the duplicate window 300–600 ms in one go, on the first tick and the first send
// (docs/performance.md › Starting on a full store). A call that needs the index whole before the
// backfill is through finishes it there.

/** Ids visited between two looks at the clock. */
const BETWEEN_CLOCKS = 64;

export class Backfill {
  private readonly rest: Iterator<string>;
  private through = false;

  /**
   * `ids` may be a live view (the store's open set): ids added while filling are visited too. A
   * visit that throws (a body the checkpoint cannot give back) is told to `skipped` and passed
   * over: it runs outside any call, where an error would end the hub.
   */
  constructor(
    ids: Iterable<string>,
    private readonly visit: (id: string) => void,
    private readonly skipped: (id: string, e: Error) => void,
  ) {
    this.rest = ids[Symbol.iterator]();
  }

  get complete(): boolean {
    return this.through;
  }

  /** Visits ids for about `budgetMs`; true once every id has been visited. */
  step(budgetMs: number): boolean {
    const until = performance.now() + budgetMs;
    while (!this.through) {
      for (let i = 0; i < BETWEEN_CLOCKS; i++) {
        const next = this.rest.next();
        if (next.done) {
          this.through = true;
          return true;
        }
        try {
          this.visit(next.value);
        } catch (e) {
          this.skipped(next.value, e as Error);
        }
      }
      if (performance.now() >= until) break;
    }
    return this.through;
  }

  /** The rest at once: a call needs the index whole. */
  finish(): void {
    this.step(Infinity);
  }
}

/**
 * Runs the backfills in order, a slice of about `sliceMs` per turn, until all are through or
 * `stop` is called. Each slice is one turn, so sockets, commits and timers go on between them.
 */
export function fillInTurns(fills: readonly Backfill[], sliceMs = 3): { stop: () => void; done: Promise<void> } {
  let stopped = false;
  let through!: () => void;
  const done = new Promise<void>((resolve) => (through = resolve));
  const turn = () => {
    const fill = fills.find((f) => !f.complete);
    if (stopped || !fill) return through();
    fill.step(sliceMs);
    setImmediate(turn);
  };
  setImmediate(turn);
  return { stop: () => void (stopped = true), done };
}

// Waiting in tests: on the event or the condition itself, polled here, never on a guess of how long
// something takes (a loaded machine makes every guess wrong). What waits for time to pass (an SLA,
// a TTL) drives the hub's fake clock (HubOptions.clock, tickMs 0, hub.tick()); against a hub
// process, it waits for what the timer does. The pause between polls below is the only sleep a
// test needs; any other is marked `// sleep: <why no event exists>`.

/** Polls a cheap synchronous condition (a push arrived, a flag is set) until it holds. */
export async function waitFor(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Polls a probe (a tool call, a snapshot, a CLI run) until it gives a value (anything but
 * undefined, null or false), and returns that value.
 */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
  what = 'condition',
  pollMs = 50,
  /** What to show on timeout besides `what` (a terminal's screen, a log). */
  explain?: () => string,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${explain ? `:\n${explain()}` : ''}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

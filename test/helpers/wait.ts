// Waiting in tests: on the event or the condition itself, polled here, never on a guess of how long
// something takes (a loaded machine makes every guess wrong). What waits for time to pass (an SLA,
// a TTL) drives the hub's fake clock (HubOptions.clock, tickMs 0, hub.tick()); against a hub
// process, it waits for what the timer does. The pause between polls below is the only sleep a
// test needs; any other is marked `// sleep: <why no event exists>`.
import { availableParallelism, loadavg } from 'node:os';

/**
 * What is waited for, in the timeout's message: a phrase, or a function called on timeout that
 * says it with what was seen (the screen, the last answer), for a failure that explains itself.
 */
export type What = string | (() => string);

function timedOut(timeoutMs: number, what: What): Error {
  return new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
}

/**
 * A timeout is a ceiling that ends a broken run, not a guess of how long the thing takes: on a
 * loaded machine (load above the cores) it stretches with the load, up to four times, so a state
 * that comes late is still waited for. Read at each poll, so a load that rises mid-wait counts.
 */
export function ceiling(timeoutMs: number): number {
  const load = loadavg()[0] / availableParallelism();
  return timeoutMs * Math.min(4, Math.max(1, load));
}

/** Polls a cheap synchronous condition (a push arrived, a flag is set) until it holds. */
export async function waitFor(cond: () => boolean, timeoutMs = 10_000, what: What = 'condition'): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ceiling(timeoutMs)) throw timedOut(Date.now() - start, what);
    await new Promise((r) => setTimeout(r, 10)); // sleep: the pause between polls
  }
}

/**
 * Polls a probe (a tool call, a snapshot, a CLI run) until it gives a value (anything but
 * undefined, null or false), and returns that value.
 */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
  what: What = 'condition',
  pollMs = 50,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() - start > ceiling(timeoutMs)) throw timedOut(Date.now() - start, what);
    await new Promise((r) => setTimeout(r, pollMs)); // sleep: the pause between polls
  }
}

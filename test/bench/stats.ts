// What the benches share: the 300-byte message bodies they send and the figures they report.

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];

/** A realistic handoff body, 300 bytes, different for every i (no dedupe short-cuts). */
export function body(i: number): string {
  return `Handoff ${i}: please review the change in src/module${i % 50}.ts and report back. `.padEnd(300, '.');
}

/** Runs `op` n times one after another; returns each run's milliseconds. */
export async function timed(n: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await op(i);
    lat.push(performance.now() - t);
  }
  return lat;
}

// Many handoffs from a raw MCP connection, a window of them in flight at once (benches and the memory tests).
import type { RawAgent } from './rawAgent';

/** Sends `n` handoffs from `from` to `to`, `window` at a time, each stored before the next; their ids in order. */
export async function sendMany(
  from: RawAgent,
  to: string,
  n: number,
  bodyBytes: number,
  window = 16,
  requiresAck = true,
): Promise<string[]> {
  const ids: string[] = new Array(n);
  const filler = 'x'.repeat(Math.max(0, bodyBytes - 16));
  let next = 0;
  let done = 0;
  const base = 1_000_000 + Math.floor(Math.random() * 1e9);
  const pending = new Map<number, number>();
  await new Promise<void>((resolve, reject) => {
    const launch = () => {
      while (next < n && pending.size < window) {
        const i = next++;
        pending.set(base + i, i);
        from.request(base + i, 'tools/call', {
          name: 'send_handoff',
          arguments: { to: [to], body: `${i} ${filler}`, insist: true, requires_ack: requiresAck },
        });
      }
    };
    const onData = () =>
      setImmediate(() => {
        for (const m of from.messages.splice(0)) {
          const i = m.id === undefined ? undefined : pending.get(m.id);
          if (i === undefined) continue;
          pending.delete(m.id);
          const id = m.result?.structuredContent?.message_id;
          if (m.error || m.result?.isError || !id) return reject(new Error(JSON.stringify(m).slice(0, 400)));
          ids[i] = id;
          done++;
        }
        if (done === n) {
          from.socket.off('data', onData);
          resolve();
        } else launch();
      });
    from.socket.on('data', onData);
    launch();
  });
  return ids;
}

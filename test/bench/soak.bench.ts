// Memory against traffic carried (#44), a draft: the real hub over its socket, a live raw
// recipient, X handoffs with requires_ack false (each pushed and settled), 10 s idle, RSS; then
// 9 X more, 10 s idle, RSS; the peak sampled every 200 ms. SNAP=DIR writes a heap snapshot of the
// hub into DIR at the end (--heapsnapshot-signal), for finding what holds memory.
// `node out/test/bench/soak.bench.js [BODY_BYTES=65536] [X=1200] [--max-old-space-size=N]`
// Known gap: the recipient is a raw socket in this process; past 8 MiB behind, the hub cuts it off
// (serve/mcp/socketTransport.ts) and it does not come back, so what follows stays open.
import { readFileSync } from 'node:fs';
import { startHub } from '../helpers/hubProcess';
import { rawAgent } from '../helpers/rawAgent';
import { sendMany } from '../helpers/sendMany';

function rssMb(pid: number, field = 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

const idle = () => new Promise((r) => setTimeout(r, 10_000)); // sleep: bench: what V8 gives back once idle

async function main(): Promise<void> {
  const body = Number(process.argv[2] ?? 65536);
  const x = Number(process.argv[3] ?? 1200);
  const snap = process.env.SNAP;
  const options = [
    ...process.argv.slice(4),
    ...(snap ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snap}`] : []),
  ];
  const hub = await startHub({ env: { NODE_OPTIONS: options.join(' ') } });
  const pid = hub.proc.pid!;
  hub.proc.on('exit', (code, signal) => {
    console.error(`hub exited (${code ?? signal}):\n${hub.log().slice(-3000)}`);
    process.exit(1);
  });
  const bob = await rawAgent(hub.socket, { identity: 'bob' });
  await bob.initialize();
  let pushes = 0;
  bob.socket.on('data', () => {
    for (const m of bob.messages.splice(0)) if (m.method === 'notifications/claude/channel') pushes++;
  });
  const alice = await rawAgent(hub.socket, { identity: 'alice' });
  await alice.initialize();
  let peak = 0;
  const sample = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 200);
  const start = rssMb(pid);
  await sendMany(alice, 'bob', x, body - 32, 16, false);
  await idle();
  const afterX = rssMb(pid);
  await sendMany(alice, 'bob', 9 * x, body - 32, 16, false);
  await idle();
  const after10 = rssMb(pid);
  clearInterval(sample);
  console.log(
    `${body} B bodies: RSS start ${start.toFixed(0)}, after ${x} ${afterX.toFixed(0)}, after ${10 * x} ${after10.toFixed(0)} MiB (+${(after10 - afterX).toFixed(0)}), peak ${peak.toFixed(0)}; ${pushes} pushed; ${hub.log().split('stopped reading').length - 1} cut off`,
  );
  if (snap) {
    process.kill(pid, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 30_000)); // sleep: bench: the snapshot is written with no event to wait on
  }
  hub.proc.removeAllListeners('exit');
  await hub.stop();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

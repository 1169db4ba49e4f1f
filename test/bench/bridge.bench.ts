// `npm run bench`, part 2: what an agent feels through the real bridge as open mail piles up.
// The MCP SDK client spawns dist/bridge.js against a real hub process (dist/hub.js); the store is
// prefilled in process (fast), every figure below is measured over the bridge or the control socket.
//   1. send_handoff, inbox, ack medians with 0 / 10k / 100k unread for the calling identity, one hub
//      process per level, all running, measured in alternating rounds;
//   2. 8 concurrent senders' throughput at each level;
//   3. the panel's change notification at 10k open (bytes posted, snapshot round trip);
//   4. hub RSS right after that traffic and again after 10 s idle (V8 shrinks its heap when idle), and
//      start time with the open mail loaded.
// Medians and ratios side by side in one run: the machine is shared and noisy.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hub } from '../../extension/hub/hub';
import { call, ChangedNotification, SnapshotRequest } from '../../extension/protocol/control';
import { connectControl } from '../../extension/shared/controlClient';
import { connectAgent, waitFor, type Agent } from '../helpers/agent';
import { ROOT, startHub, tempDir, type HubProcess } from '../helpers/hubProcess';
import { body, median, timed } from './stats';

const quick = process.argv.includes('--quick');
const LEVELS = quick ? [0, 1000, 10_000] : [0, 10_000, 100_000];
const SAMPLES = quick ? 60 : 200;
const SENDERS = 8;
const PER_SENDER = quick ? 40 : 100;
const PANEL_AT = quick ? 1000 : 10_000;
const PANEL_CHANGES = quick ? 10 : 30;
/** How long the hubs sit idle before their RSS is read again. */
const IDLE_MS = 10_000;

const ms = (n: number) => `${n.toFixed(2)} ms`;

/** Writes `unread` handoffs alice → bob, plus `ackable` more that bob ACKs during the bench. */
async function prefill(storeDir: string, unread: number, ackable: number): Promise<string[]> {
  const hub = new Hub({ workspace: ROOT, storeDir, node: 'bench' });
  await hub.start();
  for (const name of ['alice', 'bob', 'carol']) await hub.remember(name);
  const alice = { identity: 'alice', session: 'fill', node: 'bench' };
  const ids: string[] = [];
  let next = 0;
  const total = unread + ackable;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < total) {
        const i = next++;
        const r = await hub.send(alice, { to: ['bob'], body: body(i), insist: true });
        if (i >= unread) ids.push(r.message_id);
      }
    }),
  );
  await hub.close(); // checkpoint: the hub process starts from state.json, not a long journal
  return ids;
}

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return kb / 1024;
}

async function throughput(socket: string): Promise<number> {
  const senders: Agent[] = [];
  for (let s = 0; s < SENDERS; s++) senders.push(await connectAgent({ socket, name: `sender${s}` }));
  const t = performance.now();
  await Promise.all(
    senders.map((a, s) =>
      (async () => {
        for (let i = 0; i < PER_SENDER; i++)
          await a.ok('send_handoff', { to: 'carol', body: body(s * 1_000_000 + i), insist: true });
      })(),
    ),
  );
  const perSec = (SENDERS * PER_SENDER) / ((performance.now() - t) / 1000);
  for (const a of senders) await a.close();
  return perSec;
}

/** The control connection's ChangedNotification after one send, and the snapshot request's round trip. */
async function panel(socket: string, bob: Agent) {
  const control = await connectControl(socket, 'bench-panel');
  const posted: number[] = [];
  control.connection.onNotification(
    ChangedNotification.method,
    (snapshot: unknown) => void posted.push(Buffer.byteLength(JSON.stringify(snapshot))),
  );
  const arrival: number[] = [];
  for (let i = 0; i < PANEL_CHANGES; i++) {
    const have = posted.length;
    await bob.ok('send_handoff', { to: 'carol', body: body(2_000_000 + i), insist: true });
    const t = performance.now();
    await waitFor(() => posted.length > have, 10_000, 'a change notification');
    arrival.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 120)); // sleep: bench pacing, past the debounce: one notification per change
  }
  const roundTrip = await timed(PANEL_CHANGES, () => call(control.connection, SnapshotRequest));
  control.close();
  return { bytes: median(posted), arrivalAfterReply: median(arrival), snapshotRoundTrip: median(roundTrip) };
}

interface Level {
  unread: number;
  startMs: number;
  send: number;
  inbox: number;
  ack: number;
  throughput8: number;
  rssMb: number;
  /** The same, after 10 s with no traffic: V8's memory reducer has run by then. */
  idleRssMb?: number;
  panel?: Awaited<ReturnType<typeof panel>>;
}

interface Running {
  unread: number;
  hub: HubProcess;
  bob: Agent;
  carol: Agent;
  ackable: string[];
  startMs: number;
  lat: { send: number[]; inbox: number[]; ack: number[] };
  rates: number[];
}

async function open(unread: number): Promise<Running> {
  const store = join(tempDir(`bench-bridge-${unread}`), 'store');
  const ackable = await prefill(store, unread, SAMPLES);
  const t0 = performance.now();
  const hub = await startHub({ store });
  const startMs = performance.now() - t0;
  const bob = await connectAgent({ socket: hub.socket, name: 'bob' });
  const carol = await connectAgent({ socket: hub.socket, name: 'carol' });
  // Warm up the bridge, the hub's JIT and the page cache before measuring.
  for (let i = 0; i < 20; i++) await bob.ok('send_handoff', { to: 'carol', body: body(3_000_000 + i), insist: true });
  return { unread, hub, bob, carol, ackable, startMs, lat: { send: [], inbox: [], ack: [] }, rates: [] };
}

/**
 * All levels run at once, each its own hub process, measured in alternating rounds, so a busy
 * moment on this shared machine hits every level alike and the ratios between them hold.
 */
async function measure(levels: Running[]): Promise<void> {
  const rounds = 5;
  const per = SAMPLES / rounds;
  for (let r = 0; r < rounds; r++) {
    for (const l of levels) {
      const base = 4_000_000 + r * per;
      l.lat.send.push(
        ...(await timed(per, (i) => l.bob.ok('send_handoff', { to: 'carol', body: body(base + i), insist: true }))),
      );
      l.lat.inbox.push(...(await timed(per, () => l.bob.ok('inbox', {}))));
      l.lat.ack.push(...(await timed(per, (i) => l.bob.ok('ack', { message_id: l.ackable[r * per + i] }))));
    }
  }
  for (let r = 0; r < 2; r++) for (const l of levels) l.rates.push(await throughput(l.hub.socket));
}

async function main() {
  console.log(
    `Handoff bridge bench ${new Date().toISOString()} · node ${process.version} · ${quick ? 'quick' : 'full'} run`,
  );
  const levels: Running[] = [];
  for (const n of LEVELS) levels.push(await open(n));
  let rows: Level[];
  try {
    await measure(levels);
    rows = levels.map((l) => ({
      unread: l.unread,
      startMs: l.startMs,
      send: median(l.lat.send),
      inbox: median(l.lat.inbox),
      ack: median(l.lat.ack),
      throughput8: median(l.rates),
      rssMb: rssMb(l.hub.proc.pid!), // before the panel's multi-MB snapshots raise the high-water mark
    }));
    await new Promise((r) => setTimeout(r, IDLE_MS)); // sleep: bench: idling is what is measured
    for (const [i, l] of levels.entries()) rows[i].idleRssMb = rssMb(l.hub.proc.pid!);
    for (const [i, l] of levels.entries()) if (l.unread === PANEL_AT) rows[i].panel = await panel(l.hub.socket, l.bob);
  } finally {
    for (const l of levels) {
      await l.bob.close();
      await l.carol.close();
      await l.hub.stop();
    }
  }
  const ref = rows[0];
  console.log(
    '\n4. through the real bridge (MCP SDK client → dist/bridge.js → hub process), the caller holding N unread',
  );
  console.log(
    '   unread  | send_handoff     | inbox            | ack              | 8 senders     | hub RSS  | after 10 s idle | hub start',
  );
  for (const r of rows) {
    const x = (v: number, base: number) => `${ms(v)} ×${(v / base).toFixed(2)}`.padEnd(16);
    console.log(
      `   ${String(r.unread).padStart(7)} | ${x(r.send, ref.send)} | ${x(r.inbox, ref.inbox)} | ${x(r.ack, ref.ack)} | ${r.throughput8.toFixed(0).padStart(5)}/s ×${(r.throughput8 / ref.throughput8).toFixed(2)} | ${r.rssMb.toFixed(0).padStart(4)} MB | ${(r.idleRssMb ?? NaN).toFixed(0).padStart(12)} MB | ${(r.startMs / 1000).toFixed(2)} s`,
    );
  }
  const last = rows[rows.length - 1];
  console.log(
    `   hub RSS with ${last.unread} open: ${last.rssMb.toFixed(0)} MB right after the traffic, ${(last.idleRssMb ?? NaN).toFixed(0)} MB after 10 s idle (target ≤ 150 MB); ${(((last.rssMb - ref.rssMb) * 1024 * 1024) / (last.unread - ref.unread)).toFixed(0)} bytes per open message over the ${ref.rssMb.toFixed(0)} MB of an empty hub`,
  );
  const p = rows.find((r) => r.panel)?.panel;
  if (p) {
    console.log(
      `   panel at ${PANEL_AT} open: ${(p.bytes / 1024).toFixed(0)} KiB posted per change (the ChangedNotification: rows keyed by id), ` +
        `snapshot request round trip ${ms(p.snapshotRoundTrip)}, notification ${ms(p.arrivalAfterReply)} after the send's reply (100 ms debounce included)`,
    );
  }
  mkdirSync(join(ROOT, '.test-artifacts'), { recursive: true });
  writeFileSync(join(ROOT, '.test-artifacts', 'bench-bridge.json'), JSON.stringify(rows, null, 2));
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

// `npm run bench:peers`: Handoff next to the other MCP message buses for agents, measured the
// same way in one run: every agent is an MCP SDK client of the bus's own MCP server, every body is
// 300 bytes, and the systems take turns round by round, so a busy moment on this shared machine
// hits them alike. Ratios are peer / Handoff.
//   1. one sender's send latency (median, p95); 2. 8 concurrent senders' throughput;
//   3. send latency once STORED messages are stored; 4. fsyncs per send (strace);
//   5. push to a live recipient; 6. messages lost after kill -9 right after 100 acknowledged sends.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/hubProcess';
import { waitFor } from '../helpers/wait';
import { startAgentMail } from './peers/agentMail';
import { startAgentMailbox } from './peers/agentMailbox';
import { agentRelayUnavailable, RELAY_VERSION } from './peers/agentRelay';
import type { Bus, Mailbox } from './peers/bus';
import { fsyncsPerSend } from './peers/fsyncs';
import { startHandoff } from './peers/handoff';
import { body, median, p95, timed } from './stats';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 5;
const SAMPLES = quick ? 60 : 200;
const SENDERS = 8;
const PER_SENDER = quick ? 10 : 25;
const THROUGHPUT_ROUNDS = quick ? 1 : 2;
// No new sends after this in a throughput round: a bus whose sends wait on a lock must not eat the run.
const ROUND_BUDGET_MS = 15_000;
const STORED = quick ? 1000 : 10_000;
const FILL_BUDGET_MS = (quick ? 30 : 90) * 1000;
const AFTER_SAMPLES = quick ? 30 : 100;
const FSYNC_SENDS = quick ? 20 : 50;
const PUSHES = quick ? 5 : 10;
const PUSH_WAIT_MS = 3000;
const DURABLE = 100;

interface Running {
  bus: Bus;
  alice: Mailbox;
  bob: Mailbox;
  senders: Mailbox[];
  sent: number;
  stored: number;
  lat: number[];
  rates: number[];
  failed: number;
  after: number[];
}

interface Row {
  name: string;
  version: string;
  transport: string;
  sendMedianMs: number;
  sendP95Ms: number;
  throughput8: number;
  failed8: number;
  stored: number;
  sendAfterStoredMs: number;
  fsyncsPerSend: number;
  push: { ms: number } | null;
  lost: number;
}

async function open(start: () => Promise<Bus>): Promise<Running> {
  const bus = await start();
  try {
    const bob = await bus.open('Bob');
    const alice = await bus.open('Alice');
    const senders: Mailbox[] = [];
    for (let s = 0; s < SENDERS; s++) senders.push(await bus.open(`Sender${s}`));
    const r: Running = { bus, alice, bob, senders, sent: 0, stored: 0, lat: [], rates: [], failed: 0, after: [] };
    await timed(10, () => send(r)); // warm up the server, its caches and the page cache
    return r;
  } catch (e) {
    await bus.stop(); // a server left running would outlive the bench
    throw e;
  }
}

async function send(r: Running, from = r.alice): Promise<void> {
  await from.send('Bob', body(r.sent++));
  r.stored++;
}

/** Acknowledged sends per second of 8 senders at once; a failed send is counted, not retried. */
async function throughput(r: Running): Promise<number> {
  const until = performance.now() + ROUND_BUDGET_MS;
  const before = r.stored;
  const t = performance.now();
  await Promise.all(
    r.senders.map(async (s) => {
      for (let i = 0; i < PER_SENDER && performance.now() < until; i++) await send(r, s).catch(() => void r.failed++);
    }),
  );
  return (r.stored - before) / ((performance.now() - t) / 1000);
}

/** One sender stores messages until STORED are stored or the time budget is spent (the same sender for every bus: some fail under concurrency). */
async function fill(r: Running): Promise<void> {
  const until = Date.now() + FILL_BUDGET_MS;
  while (r.stored < STORED && Date.now() < until) await send(r);
}

/** The first notification the live recipient gets after each send starts, if any arrives. */
async function push(r: Running): Promise<Row['push']> {
  const lat: number[] = [];
  for (let i = 0; i < PUSHES; i++) {
    const t = performance.now();
    await send(r);
    // Timed by the notification's own arrival time, not by this poll; none within PUSH_WAIT_MS is none.
    await waitFor(() => r.bob.notifications.some((n) => n.at > t), PUSH_WAIT_MS).catch(() => undefined);
    const got = r.bob.notifications.find((n) => n.at > t);
    if (!got) return null;
    lat.push(got.at - t);
    await new Promise((res) => setTimeout(res, 50)); // sleep: bench pacing between samples
  }
  return { ms: median(lat) };
}

/** kill -9 of the server right after DURABLE acknowledged sends to a fresh recipient; counts what it can read after a restart. */
async function lostAfterKill(r: Running): Promise<number> {
  await (await r.bus.open('Dave')).close(); // registered, not live: what it can read is what was stored
  const tag = `durable-${Date.now()}`;
  const bodies = Array.from({ length: DURABLE }, (_, i) => `${tag}-${i} `.padEnd(300, '.'));
  for (const b of bodies) await r.alice.send('Dave', b);
  await r.bus.kill9();
  await r.bus.restart();
  for (const m of [r.alice, r.bob, ...r.senders]) await m.close().catch(() => undefined);
  const dave = await r.bus.open('Dave');
  const readable = new Set(await dave.read());
  await dave.close();
  return bodies.filter((b) => !readable.has(b)).length;
}

/** Every figure for every system, the systems taking turns within each step. */
async function measure(systems: Running[]): Promise<Row[]> {
  console.log(`  measuring ${systems.map((s) => s.bus.name).join(', ')} in alternating rounds…`);
  const per = SAMPLES / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of systems) {
      s.lat.push(...(await timed(per, () => send(s))));
      if (round < THROUGHPUT_ROUNDS) s.rates.push(await throughput(s));
    }
  }
  const fsyncs = new Map<Running, number>();
  const pushes = new Map<Running, Row['push']>();
  console.log('  fsyncs per send, push to a live recipient…');
  for (const s of systems) fsyncs.set(s, await fsyncsPerSend(s.bus.serverPid(), FSYNC_SENDS, () => send(s)));
  for (const s of systems) pushes.set(s, await push(s));
  console.log(`  storing up to ${STORED} messages each (at most ${FILL_BUDGET_MS / 1000} s), then sending again…`);
  for (const s of systems) await fill(s);
  for (let round = 0; round < ROUNDS; round++)
    for (const s of systems) s.after.push(...(await timed(AFTER_SAMPLES / ROUNDS, () => send(s))));
  const lost = new Map<Running, number>();
  console.log(`  kill -9 after ${DURABLE} acknowledged sends…`);
  for (const s of systems) lost.set(s, await lostAfterKill(s));
  return systems.map((s) => ({
    name: s.bus.name,
    version: s.bus.version,
    transport: s.bus.transport,
    sendMedianMs: median(s.lat),
    sendP95Ms: p95(s.lat),
    throughput8: median(s.rates),
    failed8: s.failed,
    stored: s.stored,
    sendAfterStoredMs: median(s.after),
    fsyncsPerSend: fsyncs.get(s)!,
    push: pushes.get(s)!,
    lost: lost.get(s)!,
  }));
}

async function main() {
  const date = new Date().toISOString();
  console.log(`Handoff vs peers ${date} · node ${process.version} · ${quick ? 'quick' : 'full'} run`);
  const relay = agentRelayUnavailable();
  const systems: Running[] = [];
  const skipped: { name: string; why: string }[] = [{ name: `Agent Relay ${RELAY_VERSION}`, why: relay }];
  for (const [name, start] of [
    ['Handoff', startHandoff],
    ['MCP Agent Mail', startAgentMail],
    ['agent-mailbox', startAgentMailbox],
  ] as const) {
    try {
      console.log(`  starting ${name}…`);
      systems.push(await open(start));
    } catch (e) {
      if (name === 'Handoff') throw e;
      skipped.push({ name, why: (e as Error).message.split('\n')[0] });
    }
  }
  let rows: Row[];
  try {
    rows = await measure(systems);
  } finally {
    for (const s of systems) await s.bus.stop();
  }
  printTable(date, rows, skipped);
  const dir = join(ROOT, '.test-artifacts', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'peers.json'),
    JSON.stringify(
      {
        date,
        node: process.version,
        quick,
        rows,
        skipped,
        fsyncMethod: 'strace -f -c -e trace=fsync,fdatasync,sync_file_range -p <server pid>',
      },
      null,
      2,
    ),
  );
}

function printTable(date: string, rows: Row[], skipped: { name: string; why: string }[]) {
  const [ref] = rows;
  const ratio = (v: number, base: number) => (base > 0 ? ` (×${(v / base).toFixed(2)})` : '');
  const lines: [string, (r: Row) => string][] = [
    [
      'send median',
      (r) => `${r.sendMedianMs.toFixed(2)} ms${r === ref ? '' : ratio(r.sendMedianMs, ref.sendMedianMs)}`,
    ],
    ['send p95', (r) => `${r.sendP95Ms.toFixed(2)} ms${r === ref ? '' : ratio(r.sendP95Ms, ref.sendP95Ms)}`],
    [
      `${SENDERS} senders`,
      (r) =>
        `${r.throughput8 < 100 ? r.throughput8.toPrecision(2) : r.throughput8.toFixed(0)} msg/s${r === ref ? '' : ratio(r.throughput8, ref.throughput8)}${r.failed8 ? `, ${r.failed8} sends failed` : ''}`,
    ],
    [
      `send median, N stored (≤ ${STORED}, ${FILL_BUDGET_MS / 1000} s to store)`,
      (r) =>
        `${r.sendAfterStoredMs.toFixed(2)} ms, N=${r.stored}${r === ref ? '' : ratio(r.sendAfterStoredMs, ref.sendAfterStoredMs)}`,
    ],
    [
      'fsyncs per send',
      (r) => `${r.fsyncsPerSend.toFixed(2)}${r === ref ? '' : ratio(r.fsyncsPerSend, ref.fsyncsPerSend)}`,
    ],
    [
      'push to live recipient',
      (r) => (r.push ? `yes, ${r.push.ms.toFixed(1)} ms` : `no (nothing in ${PUSH_WAIT_MS / 1000} s)`),
    ],
    [`lost after kill -9 (of ${DURABLE})`, (r) => String(r.lost)],
  ];
  console.log(`\n${date.slice(0, 10)} · ${quick ? 'quick' : 'full'} run · ratios are peer / Handoff`);
  console.log(`| | ${rows.map((r) => `${r.name} ${r.version}`).join(' | ')} |`);
  console.log(`|---|${rows.map(() => '---|').join('')}`);
  console.log(`| transport | ${rows.map((r) => r.transport).join(' | ')} |`);
  for (const [label, cell] of lines) console.log(`| ${label} | ${rows.map(cell).join(' | ')} |`);
  for (const s of skipped) console.log(`\nNot measured: ${s.name}: ${s.why}`);
  console.log(
    `\nfsyncs: strace -f -c attached to the server process during ${FSYNC_SENDS} sends (fsync, fdatasync, sync_file_range).`,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

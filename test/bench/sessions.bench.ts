// `npm run bench`, part 6: a fleet. 2, 50 and 200 live agent sessions, each through its own real
// bridge process (dist/bridge.js) on one hub process, measured level by level in one run:
//   attach (spawn → live on the hub) and detach per session, hub RSS per live session, a send's
//   latency to one recipient with the others live, and a broadcast (`to: '*'`) until the last
//   session has its push — each next to the 2-session figure. The broadcast is timed twice: to the
//   SDK clients (every session's MCP client in this one process, each parsing and validating its
//   push) and to bare readers (each bridge's stdout read raw, the push's arrival timed as its bytes
//   come, as an agent CLI in its own process would get them).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hub } from '../../extension/hub/hub';
import type { Session } from '../../extension/hub/presence/sessions';
import { connectAgent, waitFor, type Agent } from '../helpers/agent';
import { waitUntil } from '../helpers/wait';
import { DIST, NODE, startHub, tempDir } from '../helpers/hubProcess';
import { median, p95, timed } from './stats';

const quick = process.argv.includes('--quick');
const LEVELS = quick ? [2, 20, 50] : [2, 50, 200];
const SENDS = quick ? 30 : 100;
const BROADCASTS = quick ? 3 : 7;
/** Bridges started at once: the bench's own two cores start them, not the hub. */
const ATTACH_BATCH = 10;
/**
 * Identities the sessions belong to: a handoff has at most 64 recipients (bus/decide.ts), so past
 * 50 sessions the identities have several sessions each (an agent in several windows), and `*`
 * still reaches every live session.
 */
const IDENTITIES = 50;

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

interface Level {
  sessions: number;
  attachMs: number;
  rssPerSessionMb: number;
  sendMs: number;
  sendP95Ms: number;
  broadcastMs: number;
  /** The same, to bare readers of the bridges' stdout. */
  rawBroadcastMs: number;
  detachMs: number;
}

interface RawSession {
  /** When each push's bytes arrived (Date.now()). */
  pushes: number[];
  close(): void;
}

/**
 * A bridge process driven by hand: the MCP handshake written to its stdin, then its stdout read
 * raw, each push timed when its bytes arrive — no MCP client parsing it in this process.
 */
function rawSession(socket: string, name: string, session: string): Promise<RawSession> {
  const proc = spawn(NODE, [join(DIST, 'bridge.js'), '--name', name, '--session', session], {
    env: { ...process.env, HANDOFF_HUB: socket },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const raw: RawSession = { pushes: [], close: () => proc.stdin.end() };
  return new Promise((resolve, reject) => {
    let text = '';
    proc.on('exit', (code) => reject(new Error(`bridge ${session} exited with ${code}`)));
    proc.stdout.on('data', (d: Buffer) => {
      const at = Date.now();
      text += d.toString();
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
        const line = text.slice(0, nl);
        text = text.slice(nl + 1);
        if (line.includes('"notifications/claude/channel"')) raw.pushes.push(at);
        else if (line.includes('"protocolVersion"')) {
          proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
          resolve(raw); // a named session is live before its initialize is answered (G8)
        }
      }
    });
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
    proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: init })}\n`);
  });
}

async function level(sessions: number): Promise<Level> {
  const hub = await startHub();
  const pid = hub.proc.pid!;
  const boss = await connectAgent({ socket: hub.socket, name: 'boss' });
  console.error(`# ${sessions}: hub up`);
  await new Promise((r) => setTimeout(r, 500)); // sleep: bench: let the hub's start-up garbage go before the baseline
  const before = rssMb(pid);
  const workers: Agent[] = [];
  const attach: number[] = [];
  for (let i = 0; i < sessions; i += ATTACH_BATCH) {
    const batch = Array.from({ length: Math.min(ATTACH_BATCH, sessions - i) }, (_, j) => i + j);
    const t = performance.now();
    workers.push(
      ...(await Promise.all(
        batch.map((k) => connectAgent({ socket: hub.socket, name: `w${k % IDENTITIES}`, session: `w-${k}` })),
      )),
    );
    attach.push((performance.now() - t) / batch.length);
  }
  const rssPerSessionMb = (rssMb(pid) - before) / sessions;
  console.error(`# ${sessions}: attached`);

  // One recipient with one session, the crowd live beside it.
  const target = await connectAgent({ socket: hub.socket, name: 'solo' });
  const sends = await timed(SENDS, (i) =>
    boss.ok('send_handoff', { to: target.name, body: `task ${i} for ${target.name}`, insist: true }),
  );
  await target.waitForPushes(SENDS, 30_000);
  await target.close();

  console.error(`# ${sessions}: sent`);
  const broadcasts: number[] = [];
  for (let b = 0; b < BROADCASTS; b++) {
    const have = workers.map((w) => w.pushes.length);
    const t = Date.now();
    await boss.ok('send_handoff', { to: '*', body: `all hands ${b}`, insist: true });
    await waitFor(() => workers.every((w, i) => w.pushes.length > have[i]), 30_000, `broadcast ${b} to all`);
    broadcasts.push(Math.max(...workers.map((w, i) => w.pushes[have[i]].at)) - t);
  }

  // The same broadcasts to bare readers, the SDK clients gone.
  await Promise.all(workers.map((w) => w.close()));
  const raws: RawSession[] = [];
  for (let i = 0; i < sessions; i += ATTACH_BATCH)
    raws.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(ATTACH_BATCH, sessions - i) }, (_, j) =>
          rawSession(hub.socket, `w${(i + j) % IDENTITIES}`, `r-${i + j}`),
        ),
      )),
    );
  const rawBroadcasts: number[] = [];
  for (let b = 0; b < BROADCASTS; b++) {
    const have = raws.map((r) => r.pushes.length);
    const t = Date.now();
    await boss.ok('send_handoff', { to: '*', body: `all hands, raw ${b}`, insist: true });
    await waitFor(() => raws.every((r, i) => r.pushes.length > have[i]), 30_000, `raw broadcast ${b} to all`);
    rawBroadcasts.push(Math.max(...raws.map((r, i) => r.pushes[have[i]])) - t);
  }
  for (const r of raws) r.close();
  await waitUntil(
    async () => (await boss.ok('list_peers')).peers.every((p: any) => p.identity === 'boss' || p.live_sessions === 0),
    30_000,
    'every bare reader detached',
  );
  console.error(`# ${sessions}: broadcast to bare readers`);

  // Detach, timed: the SDK workers again.
  const again: Agent[] = [];
  for (let i = 0; i < sessions; i += ATTACH_BATCH)
    again.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(ATTACH_BATCH, sessions - i) }, (_, j) =>
          connectAgent({ socket: hub.socket, name: `w${(i + j) % IDENTITIES}`, session: `w-${i + j}` }),
        ),
      )),
    );
  const t = performance.now();
  await Promise.all(again.map((w) => w.close()));
  await waitUntil(
    async () => (await boss.ok('list_peers')).peers.every((p: any) => p.identity === 'boss' || p.live_sessions === 0),
    30_000,
    'every worker detached',
  );
  const detachMs = (performance.now() - t) / sessions;
  await boss.close();
  await hub.stop();
  return {
    sessions,
    attachMs: median(attach),
    rssPerSessionMb,
    sendMs: median(sends),
    sendP95Ms: p95(sends),
    broadcastMs: median(broadcasts),
    rawBroadcastMs: median(rawBroadcasts),
    detachMs,
  };
}

/**
 * The hub's own share of a broadcast, in process: from the send until its last session's deliver
 * was called (the bridges, their processes and the MCP client's parsing left out).
 */
async function fanOut(sessions: number): Promise<number> {
  const hub = new Hub({ workspace: tempDir('fan-ws'), storeDir: tempDir('fan-store'), node: 'n', tickMs: 0 });
  await hub.start();
  let last = 0;
  let count = 0;
  for (let k = 0; k < sessions; k++) {
    const session: Session = {
      key: `w-${k}`,
      identity: `w${k % IDENTITIES}`,
      roles: [],
      client: 'bench',
      connectedAt: Date.now(),
      lastSeen: Date.now(),
      pushed: new Set(),
      isOpen: () => true,
      deliver: () => {
        last = performance.now();
        count++;
        return true;
      },
      close: () => undefined,
    };
    await hub.attach(session);
  }
  const boss = { identity: 'boss', session: 'boss-1', node: 'n' };
  await hub.remember('boss');
  const times: number[] = [];
  for (let b = 0; b < BROADCASTS * 3; b++) {
    const before = count;
    const t = performance.now();
    await hub.send(boss, { to: ['*'], body: `all hands ${b}`, insist: true });
    if (count - before !== sessions) throw new Error(`broadcast ${b} reached ${count - before} of ${sessions}`);
    times.push(last - t);
  }
  await hub.close();
  return median(times);
}

async function main(): Promise<void> {
  const rows: Level[] = [];
  for (const n of LEVELS) {
    rows.push(await level(n));
    console.error(`# ${n} sessions measured`);
  }
  const fan: [number, number][] = [];
  for (const n of LEVELS) fan.push([n, await fanOut(n)]);
  const base = rows[0];
  const x = (v: number, b: number) => `${v.toFixed(2)} (×${(v / b).toFixed(2)})`;
  console.log(
    `\nLive agent sessions, each through its own bridge process, on one hub; at most ${IDENTITIES} identities, so 200 sessions are ${IDENTITIES} × 4 (${new Date().toISOString()}):\n`,
  );
  console.log(
    '| live sessions | attach per session, ms | hub RSS per session, MB | send p50, ms | send p95, ms | broadcast to the last push (SDK clients), ms | broadcast to the last push (bare readers), ms | detach per session, ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.sessions} | ${x(r.attachMs, base.attachMs)} | ${r.rssPerSessionMb.toFixed(3)} | ${x(r.sendMs, base.sendMs)} | ${r.sendP95Ms.toFixed(2)} | ${x(r.broadcastMs, base.broadcastMs)} | ${x(r.rawBroadcastMs, base.rawBroadcastMs)} | ${x(r.detachMs, base.detachMs)} |`,
    );
  console.log('\nThe hub alone, in process: a broadcast from the send until its last session was written to:\n');
  console.log('| live sessions | hub fan-out, ms |\n|---|---|');
  for (const [n, ms] of fan) console.log(`| ${n} | ${ms.toFixed(2)} (×${(ms / fan[0][1]).toFixed(2)}) |`);
  console.log(
    '\nGoals (issue 25): RSS ≤ 0.5 MB per session; a send with 200 live ≤ ×1.2 of 2; broadcast to 200 ≤ 20 ms to the last push.',
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

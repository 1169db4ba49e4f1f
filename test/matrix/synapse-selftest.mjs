// Self-test of test/matrix/synapse.mjs against a real Synapse, with matrix-js-sdk as the client.
//
//   node_modules/.bin/node test/matrix/synapse-selftest.mjs      (Node >= 22)
//
// 1. runs .ci/setup-synapse.sh (idempotent) and reports install time
// 2. starts Synapse, registers A and B; A creates a room, invites B, B joins, A sends, B syncs it
// 3. median client-to-client latency over N messages (A sendMessage -> B's sync emits it)
// 4. restart (SIGTERM, same port + data dir): B's running client gets a message sent after it
// 5. kill -9 + restart: the same again
// 6. a second Synapse with Synapse's default rc_message: a burst of raw PUT /send gets a 429
//    with retry_after_ms; the same burst against the first (raised limits) gets none
// Exits non-zero on any failure. Env: LATENCY_MESSAGES (default 50), VERBOSE=1 for SDK logs.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import * as sdk from 'matrix-js-sdk/lib/matrix.js';
import { logger as sdkGlobalLogger } from 'matrix-js-sdk/lib/logger.js';
import { startSynapse, synapseAvailable, synapseVenvDir } from './synapse.mjs';

const { ClientEvent, RoomEvent, SyncState } = sdk;
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const N = Number(process.env.LATENCY_MESSAGES || 50);
const VERBOSE = !!process.env.VERBOSE;
// createClient({ logger }) does not cover everything: the scheduler, rooms and MatrixRTC log
// through the SDK's global loglevel logger at debug level, and its getChild() loggers are reset
// to DEBUG — setLevel() on the root does not reach them, but they copy its methodFactory.
if (!VERBOSE) {
  const original = sdkGlobalLogger.methodFactory;
  sdkGlobalLogger.methodFactory = (method, level, name) =>
    (['trace', 'debug', 'info', 'log'].includes(method) ? () => {} : original(method, level, name));
  sdkGlobalLogger.rebuild();
}

const results = { passed: 0, failed: 0 };
const numbers = {};
const servers = [];
const clients = [];
const tmp = mkdtempSync(path.join(tmpdir(), 'handoff-synapse-selftest-'));

function ok(name) { results.passed++; console.log(`ok - ${name}`); }
function check(cond, name, detail = '') {
  if (!cond) throw new Error(`FAILED: ${name}${detail ? ` — ${detail}` : ''}`);
  ok(name);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ms = (x) => `${x.toFixed(1)} ms`;
const sec = (x) => `${(x / 1000).toFixed(2)} s`;
function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { n: s.length, median, p90: q(0.9), min: s[0], max: s[s.length - 1] };
}

// The SDK logs every failed /sync during a restart at error level; keep them unless VERBOSE.
const sdkLog = [];
function quietLogger(prefix = 'sdk') {
  const rec = (level) => (...args) => {
    if (VERBOSE) console.error(`[${prefix}] ${level}`, ...args);
    else if (level === 'warn' || level === 'error') sdkLog.push(`[${prefix}] ${level} ${args.map(String).join(' ')}`);
  };
  return {
    trace: rec('trace'), debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error'),
    getChild: (ns) => quietLogger(`${prefix}${ns}`),
  };
}

function waitFor(emitter, event, pred, timeoutMs, what) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { emitter.off(event, h); reject(new Error(`timeout (${timeoutMs} ms) waiting for ${what}`)); }, timeoutMs);
    function h(...args) {
      let v;
      try { v = pred(...args); } catch (e) { clearTimeout(t); emitter.off(event, h); reject(e); return; }
      if (v) { clearTimeout(t); emitter.off(event, h); resolve(v); }
    }
    emitter.on(event, h);
  });
}

async function startClient(hs, user) {
  const client = sdk.createClient({
    baseUrl: hs.url,
    userId: user.userId,
    accessToken: user.accessToken,
    deviceId: user.deviceId,
    logger: quietLogger(user.userId),
  });
  clients.push(client);
  const prepared = waitFor(client, ClientEvent.Sync, (s) => s === SyncState.Prepared, 30_000, `${user.userId} PREPARED`);
  await client.startClient({ initialSyncLimit: 5 });
  await prepared;
  return client;
}

// Arrivals of m.room.message bodies in B's live timeline, by body.
function watchTimeline(client, roomId) {
  const seen = new Map();
  const waiters = new Map();
  client.on(RoomEvent.Timeline, (ev, room, toStart, removed, data) => {
    if (toStart || removed || !room || room.roomId !== roomId) return;
    if (ev.getType() !== 'm.room.message') return;
    const body = ev.getContent().body;
    const t = performance.now();
    if (!seen.has(body)) seen.set(body, { t, live: !!data?.liveEvent });
    const w = waiters.get(body);
    if (w) { waiters.delete(body); w.resolve(t); }
  });
  return {
    seen,
    wait(body, timeoutMs, what = body) {
      if (seen.has(body)) return Promise.resolve(seen.get(body).t);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => { waiters.delete(body); reject(new Error(`timeout (${timeoutMs} ms) waiting for B to see "${what}"`)); }, timeoutMs);
        waiters.set(body, { resolve: (t) => { clearTimeout(timer); resolve(t); } });
      });
    },
  };
}

async function rawJson(method, url, token, body) {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  return { status: res.status, json, headers: res.headers };
}

async function burst(hs, user, roomId, count, tag) {
  const base = `${hs.url}/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message`;
  const rs = await Promise.all(Array.from({ length: count }, (_, i) =>
    rawJson('PUT', `${base}/${tag}-${i}-${Date.now()}`, user.accessToken, { msgtype: 'm.text', body: `${tag} ${i}` })));
  return rs;
}

function processesUsing(dir) {
  const found = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (cmd.includes('synapse.app.homeserver') && cmd.includes(dir)) found.push(Number(p));
    } catch { /* gone */ }
  }
  return found;
}

async function main() {
  // --- 1. install -------------------------------------------------------------------------------
  let t0 = performance.now();
  const setup = spawnSync('bash', [path.join(repo, '.ci', 'setup-synapse.sh')], {
    stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', env: { ...process.env, CI: process.env.CI || 'true' },
  });
  numbers.setupRunMs = performance.now() - t0;
  check(setup.status === 0, 'setup-synapse.sh exits 0', `status ${setup.status}`);
  const venv = synapseAvailable();
  check(venv && venv === synapseVenvDir(), `Synapse venv available at ${synapseVenvDir()}`);
  try {
    const marker = readFileSync(path.join(venv, '.handoff-ok'), 'utf8');
    const m = /install_seconds=(\d+)/.exec(marker);
    if (m) numbers.coldInstallS = Number(m[1]);
  } catch { /* SYNAPSE_VENV without marker */ }

  // --- 2. start, register, room, invite, join, message ------------------------------------------
  const dir1 = path.join(tmp, 'hs1');
  t0 = performance.now();
  const hs = await startSynapse({ dir: dir1 });
  servers.push(hs);
  numbers.firstStartMs = performance.now() - t0;
  check(hs.pid > 0 && /^http:\/\/127\.0\.0\.1:\d+$/.test(hs.url), `Synapse started at ${hs.url} (pid ${hs.pid})`);

  const suffix = Date.now().toString(36);
  const alice = await hs.registerUser(`alice-${suffix}`, 'alice-pw');
  const bob = await hs.registerUser(`bob-${suffix}`, 'bob-pw');
  check(alice.userId === `@alice-${suffix}:${hs.serverName}` && alice.accessToken && alice.deviceId, 'registered A via shared-secret admin API');
  check(bob.userId === `@bob-${suffix}:${hs.serverName}` && bob.accessToken, 'registered B');

  const A = await startClient(hs, alice);
  const B = await startClient(hs, bob);
  ok('both matrix-js-sdk clients reached PREPARED');

  const { room_id: roomId } = await A.createRoom({ name: 'selftest', preset: 'private_chat', invite: [bob.userId] });
  check(roomId?.startsWith('!'), `A created room ${roomId} and invited B`);
  // RoomMemberEvent.Membership fires before Room.getMyMembership() is updated; wait on
  // RoomEvent.MyMembership (re-emitted by the client) instead.
  const myMembership = (m) => B.getRoom(roomId)?.getMyMembership() === m ? Promise.resolve(true)
    : waitFor(B, RoomEvent.MyMembership, (room, membership) => room.roomId === roomId && membership === m, 15_000, `B ${m}`);
  check(await myMembership('invite'), 'B saw the invite via sync');
  await B.joinRoom(roomId);
  await myMembership('join');
  check(B.getRoom(roomId).getMyMembership() === 'join', 'B joined');

  const tl = watchTimeline(B, roomId);
  await A.sendMessage(roomId, { msgtype: 'm.text', body: 'hello B' });
  await tl.wait('hello B', 15_000);
  check(tl.seen.get('hello B').live, 'B received A\'s m.room.message via sync');

  // --- 3. latency -------------------------------------------------------------------------------
  const e2e = [];
  const rtt = [];
  for (let i = 0; i < N; i++) {
    const body = `lat ${i} ${suffix}`;
    const start = performance.now();
    const seen = tl.wait(body, 15_000);
    await A.sendMessage(roomId, { msgtype: 'm.text', body });
    rtt.push(performance.now() - start);
    e2e.push((await seen) - start);
  }
  numbers.e2e = stats(e2e);
  numbers.sendRtt = stats(rtt);
  check(e2e.length === N, `${N} messages A→B delivered in order of sending`);

  // --- 4. graceful restart on the same port -----------------------------------------------------
  const port = hs.port;
  const oldPid = hs.pid;
  t0 = performance.now();
  await hs.restart();
  numbers.restartMs = performance.now() - t0;
  check(hs.port === port && hs.pid && hs.pid !== oldPid, `restart(): same port ${port}, new pid ${hs.pid}`);
  check(processesUsing(dir1).length === 1, 'exactly one Synapse process for the data dir after restart');
  {
    const body = `after restart ${suffix}`;
    const start = performance.now();
    // A's sync may still be in its keep-alive back-off; a send is a plain HTTP request.
    await A.sendMessage(roomId, { msgtype: 'm.text', body });
    await tl.wait(body, 60_000);
    numbers.afterRestartSeenMs = performance.now() - start;
    check(true, `B (same client, never restarted) received a message sent after restart`);
  }

  // --- 5. kill -9 and restart ------------------------------------------------------------------
  const pid9 = hs.pid;
  await hs.kill9();
  check(hs.pid === null && processesUsing(dir1).length === 0, `kill9(): pid ${pid9} gone`);
  t0 = performance.now();
  await hs.restart();
  numbers.restartAfterKill9Ms = performance.now() - t0;
  check(hs.port === port, `restart() after kill9 on the same port ${port}`);
  {
    const body = `after kill9 ${suffix}`;
    const start = performance.now();
    B.retryImmediately(); // skip the SDK's 5-10 s keep-alive back-off
    await A.sendMessage(roomId, { msgtype: 'm.text', body });
    await tl.wait(body, 60_000);
    numbers.afterKill9SeenMs = performance.now() - start;
    check(true, 'B received a message sent after kill -9 + restart');
  }

  // Control: the raised limits really are raised.
  {
    const rs = await burst(hs, alice, roomId, 30, 'control');
    const n429 = rs.filter((r) => r.status === 429).length;
    check(rs.every((r) => r.status === 200), 'raised limits: 30 concurrent PUT /send all 200', `${n429} were 429`);
  }

  // --- 6. default rc_message → 429 -------------------------------------------------------------
  t0 = performance.now();
  const hs2 = await startSynapse({ dir: path.join(tmp, 'hs2'), defaultMessageRateLimit: true });
  servers.push(hs2);
  numbers.secondStartMs = performance.now() - t0;
  check(hs2.port !== hs.port, `second Synapse (default rc_message) at ${hs2.url}`);
  const carol = await hs2.registerUser(`carol-${suffix}`, 'carol-pw');
  const cr = await rawJson('POST', `${hs2.url}/_matrix/client/v3/createRoom`, carol.accessToken, { preset: 'private_chat' });
  check(cr.status === 200 && cr.json.room_id, 'room created on the second Synapse');
  const rs = await burst(hs2, carol, cr.json.room_id, 30, 'burst');
  const limited = rs.filter((r) => r.status === 429);
  numbers.burst = { sent: rs.length, ok: rs.filter((r) => r.status === 200).length, limited: limited.length };
  check(limited.length >= 1, `burst of 30 PUT /send: ${numbers.burst.ok} × 200, ${limited.length} × 429`);
  const l = limited[0];
  check(l.json.errcode === 'M_LIMIT_EXCEEDED' && typeof l.json.retry_after_ms === 'number' && l.json.retry_after_ms > 0,
    `429 body: errcode M_LIMIT_EXCEEDED, retry_after_ms ${l.json.retry_after_ms}`, JSON.stringify(l.json));
  numbers.retryAfterMs = l.json.retry_after_ms;
  numbers.retryAfterHeader = l.headers.get('retry-after');

  // --- teardown --------------------------------------------------------------------------------
  for (const c of clients.splice(0)) c.stopClient();
  const pids = servers.map((s) => s.pid);
  t0 = performance.now();
  for (const s of servers.splice(0)) await s.stop();
  numbers.stopMs = (performance.now() - t0) / pids.length;
  const left = pids.filter((p) => { try { process.kill(p, 0); return true; } catch { return false; } });
  check(left.length === 0 && processesUsing(tmp).length === 0, 'stop(): no Synapse process left', `left: ${left}`);
}

function report() {
  const e = numbers.e2e;
  const r = numbers.sendRtt;
  console.log('\n# numbers (Synapse 1.163.2, SQLite, matrix-js-sdk 43, Node ' + process.version + ')');
  if (numbers.coldInstallS !== undefined) console.log(`install (cold, from marker):         ${numbers.coldInstallS} s`);
  if (numbers.setupRunMs !== undefined) console.log(`setup-synapse.sh this run:           ${sec(numbers.setupRunMs)}`);
  if (numbers.firstStartMs !== undefined) console.log(`first start (generate config + DB):  ${sec(numbers.firstStartMs)}`);
  if (numbers.restartMs !== undefined) console.log(`restart (SIGTERM + start, same port): ${sec(numbers.restartMs)}`);
  if (numbers.restartAfterKill9Ms !== undefined) console.log(`restart after kill -9:               ${sec(numbers.restartAfterKill9Ms)}`);
  if (numbers.secondStartMs !== undefined) console.log(`second instance start (fresh dir):   ${sec(numbers.secondStartMs)}`);
  if (e) console.log(`A→B latency over ${e.n} msgs: median ${ms(e.median)}, p90 ${ms(e.p90)}, min ${ms(e.min)}, max ${ms(e.max)}`);
  if (r) console.log(`A sendMessage round trip:     median ${ms(r.median)}, p90 ${ms(r.p90)}, min ${ms(r.min)}, max ${ms(r.max)}`);
  if (numbers.afterRestartSeenMs !== undefined) console.log(`send→B sees it, right after restart (SDK keep-alive back-off): ${sec(numbers.afterRestartSeenMs)}`);
  if (numbers.afterKill9SeenMs !== undefined) console.log(`send→B sees it, after kill -9 + restart with B.retryImmediately(): ${sec(numbers.afterKill9SeenMs)}`);
  if (numbers.burst) console.log(`default rc_message burst: ${numbers.burst.ok}×200 ${numbers.burst.limited}×429, retry_after_ms=${numbers.retryAfterMs}, Retry-After header=${numbers.retryAfterHeader}`);
  if (numbers.stopMs !== undefined) console.log(`stop (SIGTERM → exit), mean:         ${ms(numbers.stopMs)}`);
  console.log(`SDK warn/error lines during the run: ${sdkLog.length}${sdkLog.length ? ` (first: ${sdkLog[0].slice(0, 160)})` : ''}`);
}

const watchdog = setTimeout(() => {
  console.error('FAILED: selftest took longer than 10 minutes');
  for (const s of servers) s.kill9();
  process.exit(1);
}, 10 * 60_000);

let code = 0;
try {
  await main();
} catch (err) {
  code = 1;
  results.failed++;
  console.error(err?.stack || String(err));
  for (const s of servers) console.error(`\n--- logs of ${s.url} ---\n${s.logs()}`);
} finally {
  for (const c of clients) { try { c.stopClient(); } catch { /* ignore */ } }
  for (const s of servers) { try { await s.stop(); } catch { /* ignore */ } }
  clearTimeout(watchdog);
  report();
  if (code === 0) rmSync(tmp, { recursive: true, force: true });
  else console.error(`data dirs kept in ${tmp}`);
  console.log(`\n${results.passed} passed, ${results.failed} failed`);
  process.exit(code);
}

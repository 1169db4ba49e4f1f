// A real Synapse homeserver for tests.
//
//   import { startSynapse, synapseAvailable } from './synapse.mjs';
//   const hs = await startSynapse({ dir: '/tmp/hs1' });       // free port on 127.0.0.1
//   const alice = await hs.registerUser('alice', 'pw');       // { userId, accessToken, deviceId }
//   await hs.restart();                                       // same port, same data dir
//   await hs.stop();
//
// Synapse is installed by .ci/setup-synapse.sh into a venv outside the repo:
//   ${HANDOFF_TOOLS:-$HOME/.cache/handoff-tools}/synapse-1.163.2
// (override with SYNAPSE_VENV). Tests that need it should call synapseAvailable() and skip (or
// fail, in CI) when it returns null.
//
// The data directory is kept between runs of startSynapse: the base config is generated once per
// dir, the override config (listener, secrets, rate limits) is rewritten on every start. SQLite.

import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, writeFileSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import path from 'node:path';
import { linkGate } from './linkGate.mjs';

export const SYNAPSE_VERSION = '1.163.2';

/** The Synapse venv dir if a verified install is there, else null. */
export function synapseAvailable() {
  const venv = synapseVenvDir();
  const py = path.join(venv, 'bin', 'python');
  if (!existsSync(py)) return null;
  // setup-synapse.sh writes the marker only after it verified the install.
  if (!process.env.SYNAPSE_VENV && !existsSync(path.join(venv, '.handoff-ok'))) return null;
  return venv;
}

export function synapseVenvDir() {
  if (process.env.SYNAPSE_VENV) return process.env.SYNAPSE_VENV;
  const tools = process.env.HANDOFF_TOOLS || path.join(process.env.HOME || homedir(), '.cache', 'handoff-tools');
  return path.join(tools, `synapse-${SYNAPSE_VERSION}`);
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// Every rate limit Synapse 1.163 reads (synapse/config/ratelimiting.py), raised far out of reach.
// A later config file replaces whole top-level keys, so each is given in full.
const HIGH = { per_second: 10000, burst_count: 100000 };
export function raisedRateLimits() {
  return {
    rc_message: HIGH,
    rc_registration: HIGH,
    rc_registration_token_validity: HIGH,
    rc_login: { address: HIGH, account: HIGH, failed_attempts: HIGH },
    rc_admin_redaction: HIGH,
    rc_joins: { local: HIGH, remote: HIGH },
    rc_joins_per_room: HIGH,
    rc_key_requests: HIGH,
    rc_3pid_validation: HIGH,
    rc_invites: { per_room: HIGH, per_user: HIGH, per_issuer: HIGH },
    rc_third_party_invite: HIGH,
    rc_media_create: HIGH,
    rc_presence: { per_user: HIGH },
    rc_delayed_event_mgmt: HIGH,
    rc_room_creation: HIGH,
    rc_reports: HIGH,
    rc_user_directory: HIGH,
    rc_profile: HIGH,
    rc_federation: { window_size: 1000, sleep_limit: 10000, sleep_delay: 0, reject_limit: 100000, concurrent: 1000 },
    federation_rr_transactions_per_room_per_second: 10000,
  };
}

// Every child we started, so a crashing test process does not leave Synapse running.
const live = new Set();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) killGroup(child.pid, 'SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => {
      for (const child of live) killGroup(child.pid, 'SIGKILL');
      process.exit(128 + { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 }[sig]);
    });
  }
}

function killGroup(pid, signal) {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
  try {
    process.kill(pid, signal);
  } catch {
    /* already gone */
  }
}

function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

function tail(file, lines = 40) {
  try {
    const text = readFileSync(file, 'utf8');
    return text.split('\n').slice(-lines).join('\n');
  } catch {
    return `(no ${file})`;
  }
}

const PID_FILE = 'handoff-synapse.pid';
// This harness is plain JS, so its loops poll with their own pause rather than test/helpers/wait.ts.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms)); // sleep: the pause between polls below

/**
 * Start Synapse.
 * @param {object} o
 * @param {string} o.dir        data dir (created; config generated once, DB kept across starts)
 * @param {number} [o.port]     client port on 127.0.0.1 (default: a free one, kept by restart())
 * @param {boolean} [o.defaultMessageRateLimit=false] leave rc_message at Synapse's default
 *        (0.2/s, burst 10) so 429 M_LIMIT_EXCEEDED paths can be tested; all other limits raised.
 * @param {string} [o.serverName='localhost'] only used when the config is first generated
 * @param {number} [o.startTimeoutMs=90000]
 * @param {object} [o.extraConfig] more top-level keys for the override config (replace whole keys)
 * @param {boolean} [o.federation=false] federate with other test homeservers on loopback, as
 *        Synapse's own demo/start.sh does: the server is named 127.0.0.1:<federation port> (so
 *        o.serverName is ignored), a self-signed TLS listener serves federation there, and
 *        certificates are not verified. Chosen when the data dir is first made, kept by restart().
 * @param {string} [o.venv]     Synapse venv (default synapseAvailable())
 */
export async function startSynapse({
  dir,
  port,
  defaultMessageRateLimit = false,
  serverName = 'localhost',
  startTimeoutMs = 90_000,
  extraConfig = {},
  venv,
  federation = false,
} = {}) {
  if (!dir) throw new Error('startSynapse: dir is required');
  venv = venv || synapseAvailable();
  if (!venv) {
    throw new Error(`Synapse is not installed at ${synapseVenvDir()} — run .ci/setup-synapse.sh`);
  }
  dir = path.resolve(dir);
  mkdirSync(dir, { recursive: true });
  const python = path.join(venv, 'bin', 'python');
  const baseConfig = path.join(dir, 'homeserver.yaml');
  const overrideConfig = path.join(dir, 'handoff-test.yaml');
  const stdioLog = path.join(dir, 'synapse.stdio.log');
  const synapseLog = path.join(dir, 'homeserver.log');

  const fedMarker = path.join(dir, 'federation-port');
  if (federation && !existsSync(baseConfig)) {
    // Other servers reach it through a gate (linkGate.mjs) the test can cut; Synapse listens behind it.
    const [gatePort, fedPort] = [await freePort(), await freePort()];
    serverName = `127.0.0.1:${gatePort}`;
    writeFileSync(fedMarker, `${gatePort} ${fedPort}\n`);
    await runOnce(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-keyout',
        'tls.key',
        '-out',
        'tls.crt',
        '-days',
        '30',
        '-nodes',
        '-subj',
        '/O=handoff-test',
      ],
      dir,
    );
  }
  if (!existsSync(baseConfig)) {
    await runOnce(
      python,
      [
        '-m',
        'synapse.app.homeserver',
        '--server-name',
        serverName,
        '--config-path',
        baseConfig,
        '--data-directory',
        dir,
        '--generate-config',
        '--report-stats=no',
      ],
      dir,
    );
  }
  const m = /^server_name:\s*"?([^"\n]+?)"?\s*$/m.exec(readFileSync(baseConfig, 'utf8'));
  const actualServerName = m ? m[1] : serverName;

  port = port || (await freePort());
  const secret = randomBytes(24).toString('hex');
  const [gatePort, fedPort] = existsSync(fedMarker)
    ? readFileSync(fedMarker, 'utf8').trim().split(' ').map(Number)
    : [];
  const fed = fedPort ? federationConfig(dir, fedPort) : undefined;
  const gate = fedPort ? await linkGate(gatePort, fedPort) : undefined;
  const override = {
    listeners: [
      {
        port,
        bind_addresses: ['127.0.0.1'],
        type: 'http',
        tls: false,
        x_forwarded: false,
        resources: [{ names: ['client'], compress: false }],
      },
      ...(fed?.listeners ?? []),
    ],
    ...fed?.config,
    registration_shared_secret: secret,
    trusted_key_servers: [],
    suppress_key_server_warning: true,
    bcrypt_rounds: 4,
    presence: { enabled: false },
    report_stats: false,
    enable_metrics: false,
    url_preview_enabled: false,
    ...raisedRateLimits(),
    ...extraConfig,
  };
  if (defaultMessageRateLimit) delete override.rc_message;
  // JSON is YAML: no YAML writer needed.
  writeFileSync(overrideConfig, JSON.stringify(override, null, 2) + '\n');

  await killStale(dir, baseConfig);

  const url = `http://127.0.0.1:${port}`;
  let child = null;
  let exitInfo = null;
  let exited = null; // promise resolved on child exit

  async function spawnAndWait() {
    if (child && !exitInfo) throw new Error('Synapse already running');
    // Something else on the port would make the readiness poll below lie.
    if (await reachable(url))
      throw new Error(`port ${port} already answers /_matrix/client/versions; refusing to start`);
    installExitHook();
    const fd = openSync(stdioLog, 'a');
    exitInfo = null;
    child = spawn(python, ['-m', 'synapse.app.homeserver', '-c', baseConfig, '-c', overrideConfig], {
      cwd: dir,
      detached: true, // own process group: stop()/kill9() signal the whole group
      stdio: ['ignore', fd, fd],
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
    });
    closeSync(fd);
    const c = child;
    // Unref'd: a test that forgets stop() still lets Node exit (the exit hook then SIGKILLs it)
    // instead of hanging the run. Every wait on it below holds a ref'd timer instead.
    c.unref();
    live.add(c);
    if (c.pid) writeFileSync(path.join(dir, PID_FILE), `${c.pid}\n`);
    exited = new Promise((resolve) => {
      c.on('exit', (code, signal) => {
        live.delete(c);
        try {
          if (readFileSync(path.join(dir, PID_FILE), 'utf8').trim() === String(c.pid))
            unlinkSync(path.join(dir, PID_FILE));
        } catch {
          /* gone */
        }
        if (c === child) exitInfo = { code, signal };
        resolve({ code, signal });
      });
      c.on('error', (err) => {
        live.delete(c);
        if (c === child) exitInfo = { code: null, signal: null, error: err };
        resolve(exitInfo);
      });
    });
    const deadline = Date.now() + startTimeoutMs;
    while (Date.now() < deadline) {
      if (exitInfo) {
        throw new Error(`Synapse exited during startup (${JSON.stringify(exitInfo)})\n` + logs());
      }
      if (await reachable(url)) return;
      await sleep(100); // sleep: the pause between polls of the client port
    }
    killGroup(c.pid, 'SIGKILL');
    await awaitExit(10_000);
    throw new Error(`Synapse did not answer ${url}/_matrix/client/versions within ${startTimeoutMs} ms\n` + logs());
  }

  function logs() {
    return `--- tail of ${stdioLog} ---\n${tail(stdioLog, 20)}\n--- tail of ${synapseLog} ---\n${tail(synapseLog, 40)}`;
  }

  // Wait for the child's exit event, keeping the event loop alive meanwhile (child is unref'd).
  async function awaitExit(ms) {
    let timer;
    const t = new Promise((r) => {
      timer = setTimeout(r, ms); // sleep: not a wait: the deadline raced against the exit event
    });
    await Promise.race([exited, t]);
    clearTimeout(timer);
  }

  async function waitGroupGone(pid, ms) {
    const deadline = Date.now() + ms;
    while (groupAlive(pid) && Date.now() < deadline) await sleep(50); // sleep: the pause between polls
    return !groupAlive(pid);
  }

  /** SIGTERM the process group, wait for exit (SIGKILL after timeoutMs). */
  async function stop({ timeoutMs = 15_000 } = {}) {
    if (!child) return;
    const c = child;
    if (!exitInfo) {
      killGroup(c.pid, 'SIGTERM');
      await awaitExit(timeoutMs);
      if (!exitInfo) {
        killGroup(c.pid, 'SIGKILL');
        await awaitExit(10_000);
      }
    }
    // Anything Synapse forked in its group goes too.
    if (!(await waitGroupGone(c.pid, 2000))) {
      killGroup(c.pid, 'SIGKILL');
      await waitGroupGone(c.pid, 5000);
    }
  }

  /** SIGKILL the process group (a crash), wait until it is gone. */
  async function kill9() {
    if (!child) return;
    const c = child;
    killGroup(c.pid, 'SIGKILL');
    if (!exitInfo) await awaitExit(10_000);
    await waitGroupGone(c.pid, 5000);
  }

  /** Start again on the same port and data dir (stops it first if still running). */
  async function restart() {
    await stop();
    await spawnAndWait();
  }

  async function registerUser(localpart, password, { admin = false } = {}) {
    const endpoint = `${url}/_synapse/admin/v1/register`;
    const nonceRes = await fetch(endpoint);
    if (!nonceRes.ok) throw new Error(`GET ${endpoint}: ${nonceRes.status} ${await nonceRes.text()}`);
    const { nonce } = await nonceRes.json();
    const mac = createHmac('sha1', secret)
      .update(`${nonce}\0${localpart}\0${password}\0${admin ? 'admin' : 'notadmin'}`)
      .digest('hex');
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ nonce, username: localpart, password, admin, mac }),
    });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(`register ${localpart}: ${res.status} ${JSON.stringify(body)}`);
    return { userId: body.user_id, accessToken: body.access_token, deviceId: body.device_id };
  }

  await spawnAndWait();

  return {
    url,
    port,
    serverName: actualServerName,
    dir,
    get pid() {
      return child && !exitInfo ? child.pid : null;
    },
    get running() {
      return !!child && !exitInfo;
    },
    stop,
    kill9,
    restart,
    /** With federation: the gate other servers reach this one through (cut() / restore()). */
    federationLink: gate,
    registerUser,
    logs,
  };
}

// A Synapse left running on this data dir by a test process that died hard (SIGKILL skips our
// exit hook): our pid file names it (Synapse writes its own pid_file only when daemonized); kill
// it if its command line is ours.
async function killStale(dir, baseConfig) {
  const pidFile = path.join(dir, PID_FILE);
  let pid;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    return;
  }
  if (!pid || pid === process.pid) return;
  let cmdline;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (cmdline.includes('synapse.app.homeserver') && cmdline.includes(baseConfig)) {
    killGroup(pid, 'SIGKILL');
    const deadline = Date.now() + 5000;
    while (existsSync(`/proc/${pid}`) && Date.now() < deadline) await sleep(50); // sleep: the pause between polls
  }
}

// Loopback federation for tests only: self-signed certificates, not verified, private addresses
// allowed. Never a production setting.
function federationConfig(dir, fedPort) {
  return {
    listeners: [
      {
        port: fedPort,
        bind_addresses: ['127.0.0.1'],
        type: 'http',
        tls: true,
        resources: [{ names: ['federation'], compress: false }],
      },
    ],
    config: {
      tls_certificate_path: path.join(dir, 'tls.crt'),
      tls_private_key_path: path.join(dir, 'tls.key'),
      federation_verify_certificates: false,
      use_insecure_ssl_client_just_for_testing_do_not_use: true,
      // Loopback is on the default block list, and the allow list does not reach every federation
      // client in 1.163 (a request to an IP-literal server name is checked against the block list alone).
      ip_range_blacklist: [],
      // Synapse backs off an unreachable server for 10 minutes at first, doubling: a cut link in a
      // test would drain only then. Seconds here; the hubs wait for it the same either way.
      federation: {
        destination_min_retry_interval: '2s',
        destination_retry_multiplier: 1.5,
        destination_max_retry_interval: '10s',
      },
    },
  };
}

async function reachable(url) {
  try {
    const res = await fetch(`${url}/_matrix/client/versions`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

function runOnce(cmd, args, cwd) {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    c.on('error', reject);
    c.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}\n${out}`)),
    );
  });
}

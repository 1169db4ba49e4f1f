// What the probe suites share: polling, a hand-spoken MCP session over the installed bridge (no
// SDK in this extension host), and running a program to completion. Plain CommonJS: no build.
const { spawn } = require('node:child_process');
const { join } = require('node:path');

async function eventually(what, cond, ms = 30000) {
  // Polls every 5 ms: the hub-ready time is measured with it.
  const until = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5)); // sleep: the pause between polls
  }
}

/** An MCP session over the installed bridge of `extensionPath`. */
function bridge(extensionPath, socket, name) {
  const child = spawn(process.execPath, [join(extensionPath, 'dist', 'bridge.js'), '--name', name], {
    env: { ...process.env, HANDOFF_HUB: socket, ELECTRON_RUN_AS_NODE: '1' },
  });
  const waiting = new Map();
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      if (msg.id !== undefined && waiting.has(msg.id)) waiting.get(msg.id)(msg);
    }
  });
  let id = 0;
  const request = (method, params) =>
    new Promise((resolve) => {
      waiting.set(++id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  return {
    async start() {
      await request('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'install-probe', version: '1' },
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    },
    call: (name, args) => request('tools/call', { name, arguments: args }),
    close: () => child.kill(),
  };
}

/** Runs `command` in its own process group (killed whole on timeout); resolves with what it printed. */
function run(command, args, { cwd, env, timeoutMs = 120000 }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

module.exports = { eventually, bridge, run };

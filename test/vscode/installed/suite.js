// Runs in the extension host of a VS Code that has Handoff installed from its .vsix: activation
// starts the hub, a terminal gets HANDOFF_HUB, a bridge agent from the installed package connects
// and sends, and the handoff shows in the panel model. Plain CommonJS: it needs no build.
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { existsSync, mkdtempSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const vscode = require('vscode');

async function eventually(what, cond, ms = 30000) {
  // Polls every 5 ms: the hub-ready time is measured with it.
  const until = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** An MCP session over the installed bridge, spoken by hand (no SDK in this extension host). */
function bridge(extensionPath, socket, name) {
  const child = spawn(process.execPath, [join(extensionPath, 'dist', 'bridge.js'), '--name', name], { env: { ...process.env, HANDOFF_HUB: socket, ELECTRON_RUN_AS_NODE: '1' } });
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
  const request = (method, params) => new Promise((resolve) => {
    waiting.set(++id, resolve);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  });
  return {
    async start() {
      await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'install-probe', version: '1' } });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    },
    call: (name, args) => request('tools/call', { name, arguments: args }),
    close: () => child.kill(),
  };
}

exports.run = async function run() {
  const ext = vscode.extensions.getExtension('handoff.handoff');
  assert.ok(ext, 'Handoff is installed');
  assert.ok(!ext.extensionPath.includes('/test/vscode/installed'), `loaded from the extensions folder: ${ext.extensionPath}`);
  assert.match(ext.extensionPath, /handoff\.handoff-\d+\.\d+\.\d+$/);
  const t0 = performance.now();
  const api = await ext.activate();
  const activated = performance.now() - t0;
  await eventually('the hub to run', () => api.hubState().kind === 'running', 30000);
  const ready = performance.now() - t0;
  console.log(`[install-probe] activation ${activated.toFixed(1)} ms of extension-host time; hub ready ${ready.toFixed(0)} ms after activate()`);

  const out = join(mkdtempSync(join(tmpdir(), 'handoff-installed-')), 'env.txt');
  const term = vscode.window.createTerminal({ name: 'env probe', shellPath: '/bin/sh', shellArgs: ['-c', `printf %s "$HANDOFF_HUB" > ${out}`] });
  try {
    assert.equal(await eventually('the terminal to write its env', () => existsSync(out) && readFileSync(out, 'utf8')), api.location.socket);
  } finally {
    term.dispose();
  }

  const agent = bridge(ext.extensionPath, api.location.socket, 'installed-agent');
  try {
    await agent.start();
    const r = await agent.call('send_handoff', { to: 'installed-agent', body: 'hello from the installed package' });
    assert.ok(!r.result?.isError, `send_handoff: ${JSON.stringify(r)}`);
    await eventually('the handoff in the panel model', () => api.panelModel().events.some((e) => e.preview === 'hello from the installed package'));
  } finally {
    agent.close();
  }
  console.log('[install-probe] installed Handoff: hub running, terminal env, bridge send, panel model: all checked');
};

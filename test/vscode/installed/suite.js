// Runs in the extension host of a VS Code that has Handoff installed from its .vsix: activation
// starts the hub, a terminal gets HANDOFF_HUB, a bridge agent from the installed package connects
// and sends, and the handoff shows in the panel model. Plain CommonJS: it needs no build.
const assert = require('node:assert/strict');
const { existsSync, mkdtempSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const vscode = require('vscode');
const { bridge, eventually } = require('./probe');

exports.run = async function run() {
  const ext = vscode.extensions.getExtension('handoff.handoff-bus');
  assert.ok(ext, 'Handoff is installed');
  assert.ok(
    !ext.extensionPath.includes('/test/vscode/installed'),
    `loaded from the extensions folder: ${ext.extensionPath}`,
  );
  assert.match(ext.extensionPath, /handoff\.handoff-bus-\d+\.\d+\.\d+$/);
  const t0 = performance.now();
  const api = await ext.activate();
  const activated = performance.now() - t0;
  await eventually('the hub to run', () => api.hubState().kind === 'running', 30000);
  const ready = performance.now() - t0;
  console.log(
    `[install-probe] activation ${activated.toFixed(1)} ms of extension-host time; hub ready ${ready.toFixed(0)} ms after activate()`,
  );

  const out = join(mkdtempSync(join(tmpdir(), 'handoff-installed-')), 'env.txt');
  const term = vscode.window.createTerminal({
    name: 'env probe',
    shellPath: '/bin/sh',
    shellArgs: ['-c', `printf %s "$HANDOFF_HUB" > ${out}`],
  });
  try {
    assert.equal(
      await eventually('the terminal to write its env', () => existsSync(out) && readFileSync(out, 'utf8')),
      api.location.socket,
    );
  } finally {
    term.dispose();
  }

  const agent = bridge(ext.extensionPath, api.location.socket, 'installed-agent');
  try {
    await agent.start();
    const r = await agent.call('send_handoff', { to: 'installed-agent', body: 'hello from the installed package' });
    assert.ok(!r.result?.isError, `send_handoff: ${JSON.stringify(r)}`);
    await eventually('the handoff in the panel model', () =>
      api.panelModel().events.some((e) => e.preview === 'hello from the installed package'),
    );
  } finally {
    agent.close();
  }
  console.log('[install-probe] installed Handoff: hub running, terminal env, bridge send, panel model: all checked');
};

// Extension-host test suite for the sample extension. Runs inside the real (remote, Node) extension
// host that the VS Code server starts; the harness passes this file as extensionTestsPath.
// No mocha: plain asserts. run() resolving => exit code 0, rejecting => non-zero.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const vscode = require('vscode');

const EXT_ID = 'handoff-test.handoff-harness-sample';

async function waitFor(what, fn, timeoutMs = 20000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function run() {
  const ext = vscode.extensions.getExtension(EXT_ID);
  assert.ok(ext, `extension ${EXT_ID} is loaded (extensionDevelopmentPath)`);
  // onStartupFinished must activate it by itself (fails if workspace trust blocked activation).
  await waitFor('activation by onStartupFinished', () => ext.isActive);
  assert.equal(typeof ext.exports.activatedAt, 'number');

  const all = await vscode.commands.getCommands(true);
  assert.ok(all.includes('handoffSample.hello'), 'command is registered');
  assert.equal(await vscode.commands.executeCommand('handoffSample.hello', 'suite'), 'hello suite #1');
  assert.equal(await vscode.commands.executeCommand('handoffSample.hello'), 'hello world #2');
  assert.match(ext.exports.statusText(), /2 hello\(s\)/);

  // The workspace the harness opened is there and trusted.
  assert.ok(vscode.workspace.workspaceFolders?.length === 1, 'one workspace folder is open');
  assert.equal(vscode.workspace.isTrusted, true, 'workspace is trusted');

  // User settings the harness wrote reach the extension host.
  assert.equal(vscode.workspace.getConfiguration('handoffSample').get('marker'), 'from-settings');

  // Environment the harness passed to the server reaches the extension host.
  assert.equal(process.env.HANDOFF_SAMPLE_MARK, 'from-harness');

  if (process.env.HANDOFF_SAMPLE_REPORT) {
    fs.writeFileSync(process.env.HANDOFF_SAMPLE_REPORT, JSON.stringify({
      ...ext.exports.hostInfo(),
      vscodeVersion: vscode.version,
      appHost: vscode.env.appHost,
      uiKind: vscode.env.uiKind,
      remoteName: vscode.env.remoteName,
      extensionKind: ext.extensionKind,
      workspaceFolder: vscode.workspace.workspaceFolders[0].uri.toString(),
      fullEnv: process.env,
    }, null, 2));
  }
  console.log('[sample suite] all assertions passed');
}

module.exports = { run };

// Deliberately failing variant of the sample suite: proves a failing suite gives a non-zero exit code.
const assert = require('node:assert/strict');
const vscode = require('vscode');

async function run() {
  const ext = vscode.extensions.getExtension('handoff-test.handoff-harness-sample');
  assert.ok(ext, 'extension is loaded');
  assert.equal(await vscode.commands.executeCommand('handoffSample.hello', 'x'), 'this is not what it returns');
}

module.exports = { run };

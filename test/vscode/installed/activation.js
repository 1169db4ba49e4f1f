// The install bench's probe (test/bench/install.bench.ts), in the extension host of a VS Code with
// Handoff installed from its .vsix: VS Code's own marks for loading Handoff's bundle and running
// its activate() (the extension host records them, whoever triggered the activation), and when
// the hub is ready. Plain CommonJS: no build.
const assert = require('node:assert/strict');
const vscode = require('vscode');
const { eventually } = require('./probe');

const ID = 'handoff.handoff-bus';

function mark(name) {
  // The extension host's performance marks (vs/base/common/performance: Date.now(), 1 ms steps).
  const found = globalThis.MonacoPerformanceMarks.getMarks().find((m) => m.name === `code/extHost/${name}/${ID}`);
  assert.ok(found, `VS Code marked ${name} for ${ID}`);
  return found.startTime;
}

exports.run = async function () {
  const ext = vscode.extensions.getExtension(ID);
  assert.ok(ext, 'Handoff is installed');
  const api = await ext.activate();
  await eventually('the hub to run', () => api.hubState().kind === 'running', 30000);
  const hubRunning = Date.now();
  const willLoad = mark('willLoadExtensionCode');
  const figures = {
    loadMs: mark('didLoadExtensionCode') - willLoad,
    activateMs: mark('didActivateExtension') - mark('willActivateExtension'),
    wallMs: mark('didActivateExtension') - willLoad,
    hubReadyMs: hubRunning - willLoad,
  };
  console.log(`[activation-probe] ${JSON.stringify(figures)}`);
};

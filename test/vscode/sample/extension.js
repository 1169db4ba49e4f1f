// Throwaway sample extension for test/vscode/harness.test.ts: one command whose answer the failing
// suite (suite/failing.js) asserts wrongly, to prove a failing suite makes the harness go red.
// Plain CommonJS, no build step.
const vscode = require('vscode');

function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('handoffSample.hello', (name) => `hello ${name ?? 'world'}`),
  );
}

module.exports = { activate, deactivate: () => undefined };

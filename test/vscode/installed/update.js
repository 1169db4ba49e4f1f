// The update test's steps inside the extension host of a VS Code with Handoff installed from a
// .vsix (test/vscode/update.test.ts says which step, and what to run, in HANDOFF_UPDATE_PROBE):
//   connect  — version A runs its hub; "Handoff: Connect Claude Code" writes Claude's config.
//   updated  — version B (A's folder deleted) runs its hub; the real claude CLI, with the config A
//              wrote: `claude mcp list`, then a handoff to the agent, then one turn.
// What the CLI printed goes to the step's result file; update.test.ts judges it.
const assert = require('node:assert/strict');
const { writeFileSync } = require('node:fs');
const vscode = require('vscode');
const { bridge, eventually, run } = require('./probe');

exports.run = async function () {
  const step = JSON.parse(process.env.HANDOFF_UPDATE_PROBE);
  const ext = vscode.extensions.getExtension('handoff.handoff-bus');
  assert.ok(ext, 'Handoff is installed');
  assert.equal(ext.packageJSON.version, step.version, `the installed version runs (${ext.extensionPath})`);
  const api = await ext.activate();
  await eventually('the hub to run', () => api.hubState().kind === 'running', 30000);
  const result = { extensionPath: ext.extensionPath, socket: api.location.socket };

  if (step.kind === 'connect') {
    assert.equal(
      await vscode.commands.executeCommand('handoff.connectClaude', { name: step.agent }),
      true,
      'Connect Claude Code succeeded',
    );
  } else {
    result.mcpList = await run(step.claude, ['mcp', 'list'], {
      cwd: api.location.workspace,
      env: step.env,
      timeoutMs: 60000,
    });
    // `mcp list` connected the agent's bridge under its name: now the bus knows whom to send to.
    const sender = bridge(ext.extensionPath, api.location.socket, 'release-manager');
    try {
      await sender.start();
      const r = await sender.call('send_handoff', { to: step.agent, body: step.handoff });
      assert.ok(
        !r.result?.isError,
        `send_handoff: ${JSON.stringify(r)}; claude mcp list printed: ${JSON.stringify(result.mcpList)}`,
      );
    } finally {
      sender.close();
    }
    result.turn = await run(step.claude, step.turnArgs, {
      cwd: api.location.workspace,
      env: step.env,
      timeoutMs: 120000,
    });
  }
  writeFileSync(step.resultFile, JSON.stringify(result, null, 2));
  console.log(`[update-probe] ${step.kind}: done in ${ext.extensionPath}`);
};

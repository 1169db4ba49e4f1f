// Throwaway sample extension for the VS Code harness self-test. Plain CommonJS, no build step.
const vscode = require('vscode');

let helloCount = 0;

function activate(context) {
  const item = vscode.window.createStatusBarItem('handoffSample.status', vscode.StatusBarAlignment.Left, 1000);
  item.name = 'Handoff Sample';
  item.text = '$(check) Handoff sample ready';
  item.tooltip = 'Handoff harness sample extension';
  item.command = 'handoffSample.hello';
  item.show();
  context.subscriptions.push(item);

  context.subscriptions.push(
    vscode.commands.registerCommand('handoffSample.hello', (name) => {
      helloCount += 1;
      item.text = `$(check) Handoff sample: ${helloCount} hello(s)`;
      return `hello ${name ?? 'world'} #${helloCount}`;
    }),
  );

  context.subscriptions.push(
    vscode.commands.registerCommand('handoffSample.openPanel', () => {
      const panel = vscode.window.createWebviewPanel('handoffSample.panel', 'Handoff Sample Panel', vscode.ViewColumn.One, { enableScripts: true });
      panel.webview.html = `<!DOCTYPE html><html><body>
        <h1 id="greeting">Hello from the Handoff sample webview</h1>
        <button id="ping">Ping</button> <span id="reply"></span>
        <script>
          const vscode = acquireVsCodeApi();
          document.getElementById('ping').addEventListener('click', () => vscode.postMessage({ type: 'ping' }));
          window.addEventListener('message', (e) => { document.getElementById('reply').textContent = e.data.text; });
        </script></body></html>`;
      panel.webview.onDidReceiveMessage((m) => {
        if (m.type === 'ping') panel.webview.postMessage({ text: `pong #${++helloCount}` });
      });
      return true;
    }),
  );

  // Returned object is the extension's exports (ext.exports in tests).
  return {
    activatedAt: Date.now(),
    statusText: () => item.text,
    hostInfo: () => ({
      execPath: process.execPath,
      nodeVersion: process.version,
      pid: process.pid,
      ppid: process.ppid,
      cwd: process.cwd(),
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(VSCODE_|ELECTRON_|HANDOFF_|NODE_|PATH$|HOME$)/.test(k))),
    }),
  };
}

function deactivate() {}

module.exports = { activate, deactivate };

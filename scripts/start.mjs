// `npm start`: build, then open the extension in a real VS Code on a demo workspace — desktop
// `code` when it is installed, else the VS Code server from the code-server package on localhost.
//
//   npm start                 # port 8080 for the VS Code server (or PORT=…)
//   npm start -- --server     # the VS Code server even when desktop `code` is installed
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { vscodeNodeBinary, vscodeServerAvailable } from '../test/vscode/harness.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const state = join(root, '.handoff');
const demo = join(state, 'demo-workspace');

execFileSync(process.execPath, ['esbuild.mjs', '--no-tests'], { cwd: root, stdio: 'inherit' });

// A small folder to try things in: select lines of the sample and run "Handoff: Send Handoff…".
if (!existsSync(demo)) {
  mkdirSync(demo, { recursive: true });
  writeFileSync(join(demo, 'README.md'), [
    '# Handoff demo workspace',
    '',
    'Open a terminal here (it has HANDOFF_HUB set) and start two agents, or connect them with',
    '"Handoff: Connect Claude Code" / "Handoff: Connect Codex". Then select the function in',
    '`parser.js` and run "Handoff: Send Handoff…" from the command palette.',
    '',
  ].join('\n'));
  writeFileSync(join(demo, 'parser.js'), 'export function parse(line) {\n  return line.split(",").map((x) => x.trim());\n}\n');
}

const desktop = !process.argv.includes('--server') && spawnSync('code', ['--version'], { stdio: 'ignore' }).status === 0;
if (desktop) {
  spawn('code', ['--new-window', `--extensionDevelopmentPath=${root}`, demo], { stdio: 'inherit', detached: true }).unref();
  console.log(`Opened desktop VS Code on ${demo} with the extension from ${root}.`);
  process.exit(0);
}

if (!vscodeServerAvailable()) {
  // First run on a machine without desktop VS Code: install the server (npm packages only).
  console.log('Desktop `code` is not installed: installing the VS Code server (code-server from npm) once…');
  spawnSync('bash', [join(root, '.ci', 'setup-vscode.sh')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}
const pkg = vscodeServerAvailable();
if (!pkg) {
  console.error('Neither desktop `code` nor the VS Code server could be found or installed; see the setup log above (bash .ci/setup-vscode.sh).');
  process.exit(1);
}
const port = Number(process.env.PORT) || 8080;
const userData = join(state, 'vscode-server', 'user-data');
const settings = join(userData, 'User', 'settings.json');
if (!existsSync(settings)) {
  mkdirSync(dirname(settings), { recursive: true });
  // Workspace trust would keep the extension from activating in this throwaway folder.
  writeFileSync(settings, JSON.stringify({ 'security.workspace.trust.enabled': false, 'workbench.startupEditor': 'none', 'git.openRepositoryInParentFolders': 'never' }, null, 2));
}
const server = spawn(vscodeNodeBinary(), [
  join(pkg, 'lib', 'vscode', 'out', 'server-main.js'),
  '--host', '127.0.0.1', '--port', String(port), '--without-connection-token', '--accept-server-license-terms',
  // The web workbench honours the extensionDevelopmentPath payload only with the smoke-test driver on.
  '--enable-smoke-test-driver', '--disable-telemetry', '--user-data-dir', userData,
  '--extensions-dir', join(state, 'vscode-server', 'extensions'), '--server-data-dir', join(state, 'vscode-server', 'server-data'),
], { stdio: ['ignore', 'pipe', 'inherit'] });

const payload = JSON.stringify([['extensionDevelopmentPath', `vscode-remote://127.0.0.1:${port}${root}`]]);
const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(demo)}&payload=${encodeURIComponent(payload)}`;
let announced = false;
server.stdout.on('data', (d) => {
  process.stdout.write(d);
  if (!announced && /Extension host agent listening|Web UI available/.test(String(d))) {
    announced = true;
    console.log(`\nHandoff is running in the VS Code server. Open:\n\n  ${url}\n\nCtrl+C stops it.`);
  }
});
server.on('exit', (code) => process.exit(code ?? 0));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.kill('SIGTERM'));

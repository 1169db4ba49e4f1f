// Self-test of test/vscode/harness.mjs with the throwaway sample extension in test/vscode/sample.
//   node test/vscode/harness-selftest.mjs            (Node >= 22; needs bash .ci/setup-vscode.sh first)
// 1. the passing suite           -> exit code 0 (and a report of the ext host's execPath/env)
// 2. a deliberately failing suite -> non-zero exit code
// 3. no suite, onPage: dark theme, status bar item visible, screenshot /tmp/harness-shot.png,
//    then the sample's webview panel via the command palette, a click inside the webview and its
//    reply, screenshot /tmp/harness-webview.png
// After each run: no server or browser process may be left.
// CI=true (or HANDOFF_REQUIRE_VSCODE=1) turns "not installed" from a loud skip into a failure.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runVsCode, vscodeServerAvailable, vscodeNodeBinary, statusBarItem, runCommand, webviewFrame } from './harness.mjs';
import { strict, whyMissing } from '../helpers/skip.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const sample = path.join(here, 'sample');
const SHOT = process.env.HANDOFF_SHOT || '/tmp/harness-shot.png';
const WEBVIEW_SHOT = process.env.HANDOFF_WEBVIEW_SHOT || '/tmp/harness-webview.png';

const installed = vscodeServerAvailable();
if (!installed) {
  const fail = strict() || process.env.HANDOFF_REQUIRE_VSCODE === '1';
  console.log(`${fail ? 'FAIL' : 'SKIP'} harness-selftest: ${whyMissing('setup-vscode', 'the VS Code server')}`);
  process.exit(fail ? 1 : 0);
}
console.log(`VS Code server: ${installed}`);

function ourProcesses() {
  const out = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes('handoff-vscode-') || cmd.includes('server-main.js') || (cmd.includes('chromium') && cmd.includes('playwright'))) out.push(`${d} ${cmd.slice(0, 160)}`);
    } catch { /* gone */ }
  }
  return out;
}

let passed = 0; let failed = 0;
async function check(name, fn) {
  const t = Date.now();
  try {
    await fn();
    passed++;
    console.log(`ok   ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
  const left = ourProcesses();
  if (left.length) {
    failed++;
    console.log(`FAIL ${name}: leftover processes:\n  ${left.join('\n  ')}`);
  }
}

function showLogsOnFail(res, ok) {
  if (!ok) console.log(res.logs.split('\n').slice(-80).join('\n'));
}

const before = ourProcesses();
if (before.length) console.log(`warning: already running before the self-test:\n  ${before.join('\n  ')}`);

await check('passing suite exits 0', async () => {
  const report = path.join(os.tmpdir(), `harness-report-${process.pid}.json`);
  const res = await runVsCode({
    extensionPath: sample,
    testsPath: path.join(sample, 'suite', 'index.js'),
    env: { HANDOFF_SAMPLE_MARK: 'from-harness', HANDOFF_SAMPLE_REPORT: report },
    userSettings: { 'handoffSample.marker': 'from-settings' },
    timeoutMs: 120_000,
  });
  showLogsOnFail(res, res.exitCode === 0);
  assert.equal(res.exitCode, 0, `exit code ${res.exitCode} (timedOut=${res.timedOut})`);
  assert.match(res.logs, /\[sample suite\] all assertions passed/);
  const info = JSON.parse(fs.readFileSync(report, 'utf8'));
  fs.rmSync(report);
  assert.equal(info.execPath, vscodeNodeBinary(), 'ext host runs on the Node 24 binary');
  assert.match(info.nodeVersion, /^v24\./);
  const vscodeVars = Object.keys(info.fullEnv).filter((k) => k.startsWith('VSCODE_')).sort();
  console.log(`     ext host: execPath=${info.execPath} node=${info.nodeVersion} vscode=${info.vscodeVersion} remoteName=${info.remoteName} extensionKind=${info.extensionKind} appHost=${info.appHost}`);
  console.log(`     ext host VSCODE_* env: ${vscodeVars.map((k) => `${k}=${String(info.fullEnv[k]).slice(0, 60)}`).join(' | ')}`);
  console.log(`     timings: server ${res.durations.serverReadyMs} ms, workbench ${res.durations.workbenchMs} ms, suite done ${res.durations.suiteMs} ms, total ${res.durations.totalMs} ms`);
});

await check('failing suite exits non-zero', async () => {
  const res = await runVsCode({
    extensionPath: sample,
    testsPath: path.join(sample, 'suite', 'failing.js'),
    timeoutMs: 120_000,
  });
  showLogsOnFail(res, res.exitCode !== 0 && res.exitCode !== null);
  assert.equal(res.timedOut, false, 'did not time out');
  assert.notEqual(res.exitCode, null);
  assert.notEqual(res.exitCode, 0);
  assert.match(res.logs, /this is not what it returns/, 'the assertion error reaches the logs');
  console.log(`     exit code ${res.exitCode}; total ${res.durations.totalMs} ms`);
});

await check('workbench renders (dark theme, status bar item, webview) and screenshots', async () => {
  for (const f of [SHOT, WEBVIEW_SHOT]) fs.rmSync(f, { force: true });
  let facts;
  const res = await runVsCode({
    extensionPath: sample,
    userSettings: { 'workbench.colorTheme': 'Default Dark Modern' },
    timeoutMs: 120_000,
    onPage: async (page) => {
      const item = statusBarItem(page, 'Handoff sample ready');
      await item.waitFor({ state: 'visible', timeout: 30_000 });
      const itemId = await item.getAttribute('id');
      const bg = await page.locator('.monaco-workbench').evaluate((el) => getComputedStyle(el).backgroundColor);
      const themeClass = await page.locator('.monaco-workbench').getAttribute('class');
      await page.waitForTimeout(500);
      await page.screenshot({ path: SHOT });

      await runCommand(page, 'Handoff Sample: Open Panel');
      const frame = await webviewFrame(page, (f) => f.locator('#greeting').count().then((n) => n > 0));
      assert.equal(await frame.locator('#greeting').textContent(), 'Hello from the Handoff sample webview');
      await frame.locator('#ping').click();
      await frame.locator('#reply', { hasText: /pong #\d+/ }).waitFor({ timeout: 10_000 });
      await statusBarItem(page, 'Handoff sample').first().waitFor();
      await page.screenshot({ path: WEBVIEW_SHOT });
      facts = { itemId, bg, themeClass, reply: await frame.locator('#reply').textContent() };
    },
  });
  showLogsOnFail(res, res.exitCode === 0);
  if (res.error) throw res.error;
  assert.equal(res.exitCode, 0);
  assert.ok(fs.statSync(SHOT).size > 10_000, 'screenshot written');
  assert.match(facts.themeClass, /\bvs-dark\b/, 'dark theme applied');
  console.log(`     status bar item id=${facts.itemId}; workbench bg=${facts.bg}; webview reply="${facts.reply}"`);
  console.log(`     screenshots: ${SHOT}, ${WEBVIEW_SHOT}; workbench ${res.durations.workbenchMs} ms, total ${res.durations.totalMs} ms`);
});

console.log(`harness-selftest: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

// Builds the three programs (extension host client, hub, bridge) and the CLI as separate bundles.
import * as esbuild from 'esbuild';
import { cp, mkdir, chmod } from 'node:fs/promises';

const watch = process.argv.includes('--watch');
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  sourcemap: true,
  external: ['vscode'],
  logLevel: 'warning',
  // Its ESM entry finds the WebAssembly through import.meta.url, which a CommonJS bundle lacks.
  alias: { '@matrix-org/matrix-sdk-crypto-wasm': './node_modules/@matrix-org/matrix-sdk-crypto-wasm/node.cjs' },
};
// The programs a user runs with their own Node: one line saying which Node they need, not a stack
// trace from deep in a dependency.
const NODE_CHECK =
  'if (+process.versions.node.split(".")[0] < 22) { process.stderr.write("handoff needs Node.js 22 or later; this is Node " + process.version + " at " + process.execPath + "\\n"); process.exit(1); }';
// The extension bundle requires ./hubClient at run time, when the hub starts: vscode-languageclient
// (most of the client's code) is then not parsed during activation. Everywhere else (tests) it is bundled.
const lazyHubClient = {
  name: 'lazy-hub-client',
  setup(build) {
    build.onResolve({ filter: /^\.\/hubClient$/ }, () => ({ path: './hubClient.js', external: true }));
  },
};
const entries = [
  { in: 'extension/client/extension.ts', out: 'extension', plugins: [lazyHubClient] },
  { in: 'extension/client/hubClient.ts', out: 'hubClient' },
  { in: 'extension/hub/start/main.ts', out: 'hub' },
  // matrix-js-sdk lives in its own bundle, required by the hub only when Matrix is configured.
  { in: 'extension/hub/matrix/index.ts', out: 'matrix' },
  { in: 'extension/bridge/main.ts', out: 'bridge', banner: `#!/usr/bin/env node\n${NODE_CHECK}` },
  { in: 'extension/cli/main.ts', out: 'cli', banner: `#!/usr/bin/env node\n${NODE_CHECK}` },
  // What installed agent hooks run: small, so an agent's every tool call pays only a Node start.
  { in: 'extension/hook/bin.ts', out: 'hook' },
];
const fs = await import('node:fs');
const builds = entries
  .filter((e) => fs.existsSync(e.in))
  .map((e) => ({
    ...common,
    entryPoints: { [e.out]: e.in },
    outdir: 'dist',
    banner: e.banner ? { js: e.banner } : undefined,
    plugins: e.plugins,
  }));

// Webview assets: the elements bundle and codicons are copied next to our own media.
async function copyWebviewAssets() {
  await mkdir('dist/media', { recursive: true });
  const copies = [
    ['node_modules/@vscode-elements/elements/dist/bundled.js', 'dist/media/elements.js'],
    ['node_modules/@vscode/codicons/dist/codicon.css', 'dist/media/codicon.css'],
    ['node_modules/@vscode/codicons/dist/codicon.ttf', 'dist/media/codicon.ttf'],
    ['media/panel.css', 'dist/media/panel.css'],
  ];
  for (const [from, to] of copies) if (fs.existsSync(from)) await cp(from, to);
}

// The Rust crypto of encrypted rooms (bundled into matrix.js) reads its WebAssembly from
// <bundle dir>/pkg at run time.
async function copyCryptoWasm() {
  const wasm = 'node_modules/@matrix-org/matrix-sdk-crypto-wasm/pkg/matrix_sdk_crypto_wasm_bg.wasm';
  // The Matrix suites bundle it too (a rogue device of their own).
  for (const dir of ['dist', ...(tests.length ? ['out/test/matrix'] : [])]) {
    await mkdir(`${dir}/pkg`, { recursive: true });
    await cp(wasm, `${dir}/pkg/matrix_sdk_crypto_wasm_bg.wasm`);
  }
}

// Tests are TypeScript too: each test file is bundled on its own into out/ and run by node --test.
function testEntries(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .filter((f) => /\.(test|bench)\.ts$/.test(f))
    .map((f) => `${dir}/${f}`);
}
// The sidebar webview's own script runs in the browser, not in Node.
builds.push({
  ...common,
  platform: 'browser',
  format: 'iife',
  target: 'chrome120',
  external: [],
  entryPoints: { panel: 'extension/webview/panel.ts' },
  outdir: 'dist/media',
});

const tests = testEntries('test');
if (tests.length && !process.argv.includes('--no-tests')) {
  builds.push({
    ...common,
    entryPoints: tests,
    outdir: 'out/test',
    outbase: 'test',
    sourcemap: 'inline',
    external: ['vscode', 'playwright-core'],
  });
}

// Extension-host suites (mocha inside a real VS Code): one bundle per suite folder's index.ts.
const hostSuites = [
  'test/vscode/suite/index.ts',
  'test/vscode/agentSuite/index.ts',
  'test/vscode/agentHostSuite/index.ts',
].filter((f) => fs.existsSync(f));
if (hostSuites.length && !process.argv.includes('--no-tests')) {
  builds.push({
    ...common,
    entryPoints: hostSuites,
    outdir: 'out/test',
    outbase: 'test',
    sourcemap: 'inline',
    external: ['vscode', 'mocha'],
  });
}

if (watch) {
  for (const b of builds) (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  await copyWebviewAssets();
  await copyCryptoWasm();
  for (const bin of ['dist/bridge.js', 'dist/cli.js']) if (fs.existsSync(bin)) await chmod(bin, 0o755);
}

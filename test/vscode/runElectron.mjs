// The same extension-host suites under @vscode/test-electron, for machines that can download
// VS Code (this one cannot: there, editor.test.ts runs them in the VS Code server instead).
//
//   node esbuild.mjs && node test/vscode/runElectron.mjs [--version stable|insiders|1.101.0]
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTests } from '@vscode/test-electron';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const temp = mkdtempSync(join(tmpdir(), 'handoff-electron-'));
const workspace = join(temp, 'workspace');
const userData = join(temp, 'user-data');
for (const d of [workspace, join(temp, 'codex'), join(temp, 'claude')]) mkdirSync(d, { recursive: true });
mkdirSync(join(userData, 'User'), { recursive: true });
writeFileSync(
  join(userData, 'User', 'settings.json'),
  JSON.stringify({
    'security.workspace.trust.enabled': false,
    'handoff.claudeCommand': join(root, 'node_modules', '.bin', 'claude'),
  }),
);
const versionArg = process.argv.indexOf('--version');

try {
  await runTests({
    version: versionArg > 0 ? process.argv[versionArg + 1] : undefined,
    extensionDevelopmentPath: root,
    extensionTestsPath: join(root, 'out', 'test', 'vscode', 'suite', 'index.js'),
    launchArgs: [workspace, '--disable-extensions', '--user-data-dir', userData],
    extensionTestsEnv: {
      HANDOFF_TICK_MS: '200',
      CODEX_HOME: join(temp, 'codex'),
      CLAUDE_CONFIG_DIR: join(temp, 'claude'),
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    },
  });
} catch (e) {
  console.error(`extension-host suites under @vscode/test-electron failed: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
}

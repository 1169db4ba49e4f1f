// The .vsix as `npm run package` builds it (from the current dist/), and its installation into an
// extensions folder the way a user's `code --install-extension` does it: the VS Code server's CLI.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/hubProcess';
import { vscodeNodeBinary, vscodeServerAvailable } from './harness.mjs';

const VSCE_ARGS = [
  'package',
  '--no-dependencies',
  '--readme-path',
  'docs/marketplace.md',
  '--no-rewrite-relative-links',
  '--allow-missing-repository',
];
/** What the package is made of (.vscodeignore picks from these). */
const PACKAGE_FILES = [
  'dist',
  '.vscodeignore',
  'LICENSE',
  'CHANGELOG.md',
  'media/handoff.svg',
  'media/handoff.png',
  'docs/marketplace.md',
];

export function checkoutVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The next patch version: what an extension update looks like. */
export function bumpedVersion(v = checkoutVersion()): string {
  const [major, minor, patch] = v.split('-')[0].split('.').map(Number);
  return `${major}.${minor}.${patch + 1}`;
}

/**
 * Packages the checkout's dist/ into `<dir>/handoff-<version>.vsix`. With `version`, from a staged
 * copy whose manifest carries that version: the checkout's package.json is never touched.
 */
export function packageVsix(dir: string, version?: string): string {
  const out = join(dir, `handoff-bus-${version ?? checkoutVersion()}.vsix`);
  let cwd = ROOT;
  if (version) {
    cwd = mkdtempSync(join(tmpdir(), 'handoff-vsix-stage-'));
    for (const f of PACKAGE_FILES) {
      mkdirSync(join(cwd, f, '..'), { recursive: true });
      cpSync(join(ROOT, f), join(cwd, f), { recursive: true });
    }
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(cwd, 'package.json'), JSON.stringify({ ...manifest, version }, null, 2));
  }
  execFileSync(join(ROOT, 'node_modules', '.bin', 'vsce'), [...VSCE_ARGS, '-o', out], { cwd, stdio: 'pipe' });
  return out;
}

/** `--install-extension` through the VS Code server's CLI: installs into `extensionsDir` and exits. */
export function installVsix(vsix: string, extensionsDir: string, serverDataDir: string): string {
  const pkg = vscodeServerAvailable();
  if (!pkg) throw new Error('VS Code server not installed: run bash .ci/setup-vscode.sh');
  const main = join(pkg, 'lib', 'vscode', 'out', 'server-main.js');
  return execFileSync(
    vscodeNodeBinary(),
    [
      main,
      '--accept-server-license-terms',
      '--extensions-dir',
      extensionsDir,
      '--server-data-dir',
      serverDataDir,
      '--install-extension',
      vsix,
    ],
    { encoding: 'utf8', stdio: 'pipe' },
  );
}

// What `npm start` must install before it can open the VS Code server, said before anything is
// done: where the server goes and how big it is, which Debian packages are missing and whether
// this user can install them. Installing needs a yes — from the person at a terminal, or `--yes`.
import { spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline/promises';
import { join } from 'node:path';
import { homedir } from 'node:os';

/** What builds the server's native modules (the tests add Chromium; `npm start` does not). */
export const BUILD_PACKAGES = [
  'libkrb5-dev',
  'libsecret-1-dev',
  'libx11-dev',
  'libxkbfile-dev',
  'build-essential',
  'python3',
  'pkg-config',
];

function installed(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

function canInstallPackages() {
  if (process.getuid?.() === 0) return 'as root';
  return spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0 ? 'with sudo' : undefined;
}

/**
 * @returns {{ text: string, missing: string[], blocked?: string }} what would be done; `blocked`
 * when it cannot be (packages missing and no root or sudo to install them).
 */
export function serverInstallPlan(env = process.env) {
  const tools = env.HANDOFF_TOOLS || join(env.HOME || homedir(), '.cache', 'handoff-tools');
  const apt = spawnSync('dpkg-query', ['--version'], { stdio: 'ignore' }).status === 0;
  const missing = apt ? BUILD_PACKAGES.filter((p) => !installed(p)) : [];
  const how = canInstallPackages();
  const lines = [
    'npm start opens Handoff in the VS Code server, which is not installed yet. Installing it:',
    `  - downloads the VS Code server (the npm package code-server) and Node 24 into ${tools} (several hundred MB: the size on disk is measured and said when it is done; nothing else is written outside this checkout). Its native modules compile for a few minutes: each step and its progress are shown as it goes`,
  ];
  if (missing.length)
    lines.push(
      `  - installs ${missing.length} Debian package(s) it is built with, with apt-get ${how ?? '(needs root)'}: ${missing.join(' ')}`,
    );
  else if (!apt)
    lines.push(
      `  - builds native modules, which needs a C++ compiler, python3 and the headers of ${BUILD_PACKAGES.join(', ')}`,
    );
  const blocked =
    missing.length && !how
      ? `These Debian packages are missing and this user can install none (no root, no sudo without a password): ask for\n  sudo apt-get install ${missing.join(' ')}\nthen run npm start again. Or install desktop VS Code: npm start then uses it and installs nothing.`
      : undefined;
  return { text: lines.join('\n'), missing, blocked };
}

/** `--yes` or HANDOFF_YES=1 says yes; a person at a terminal is asked; anything else is no. */
export async function consent(plan, argv = process.argv, env = process.env) {
  if (plan.blocked) {
    console.log(plan.blocked);
    return false;
  }
  if (argv.includes('--yes') || env.HANDOFF_YES === '1') return true;
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question('Install it now? [y/N] ')).trim());
  } finally {
    rl.close();
  }
}

// Stable launchers: what connect writes into agent configs must outlive editor and extension
// updates, which move both the editor's Node (the VS Code server's lives under a commit-named
// folder) and the extension's folder (versioned). So configs name `<data>/bin/node` and
// `<data>/dist/…`, and every activation of the extension points them at the current ones.
// `<data>/bin/handoff` is the CLI by the same route: a `handoff` of ours, where `npx handoff`
// outside a checkout would fetch an unrelated registry package of that name. On Windows the
// launchers are `.cmd` files and the build a junction (platform/launcher.ts, docs/platforms.md).
import { chmodSync, renameSync, rmdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ensurePrivateDir } from '../paths';
import { thisLauncherKind, type LauncherKind } from '../platform/launcher';
import type { Launch } from './launch';
import { batchText } from './quote';

/** Where the launchers live: $XDG_DATA_HOME/handoff, else ~/.local/share/handoff. */
export function launcherDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'handoff');
}

/** The folder holding the `handoff` command: the editor's terminals have it on PATH. */
export function commandDir(dir: string): string {
  return join(dir, 'bin');
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Points the launchers at this Node and this build; returns the Launch that connect writes.
 * `electron`: the Node is the desktop editor's binary, which runs as Node only with ELECTRON_RUN_AS_NODE.
 */
export function refreshLaunchers(
  dir: string,
  node: string,
  dist: string,
  electron: boolean,
  kind: LauncherKind = thisLauncherKind,
  home: string = homedir(),
): Launch {
  // What is written here runs in every agent and is first on every terminal's PATH: the folders must
  // be real ones of ours that nobody else may write, as the runtime folder is (a symlink or another
  // user's folder, or one others may write, is refused; ours is made 0700).
  ensurePrivateDir(dir, { refuseWritable: true });
  ensurePrivateDir(join(dir, 'bin'), { refuseWritable: true });
  if (kind === 'cmd') return refreshCmdLaunchers(dir, node, dist, electron, home);
  const script = [
    '#!/bin/sh',
    '# Written by the Handoff extension at every activation: the Node that runs Handoff for agent CLIs.',
    `NODE=${sh(node)}`,
    'if [ ! -x "$NODE" ]; then',
    '  echo "handoff: the Node this launcher names ($NODE) is gone: the editor was updated or removed. Open the folder in VS Code with Handoff once to refresh it." >&2',
    '  exit 127',
    'fi',
    `${electron ? 'ELECTRON_RUN_AS_NODE=1 ' : ''}exec "$NODE" "$@"`,
    '',
  ].join('\n');
  const bin = join(dir, 'bin', 'node');
  writeScript(bin, script);
  const link = join(dir, 'dist');
  writeScript(
    join(dir, 'bin', 'handoff'),
    [
      '#!/bin/sh',
      '# Written by the Handoff extension at every activation: the handoff CLI.',
      `exec ${sh(bin)} ${sh(join(link, 'cli.js'))} "$@"`,
      '',
    ].join('\n'),
  );
  // The build: a symlink replaced atomically, so a hook starting meanwhile finds the old or the new one.
  const tmpLink = `${link}.${process.pid}.tmp`;
  rmSync(tmpLink, { force: true });
  symlinkSync(dist, tmpLink);
  renameSync(tmpLink, link);
  return { node: bin, dist: link };
}

/**
 * Windows: `.cmd` launchers and the build as a junction (a symlink needs Developer Mode, a junction
 * does not). A junction cannot be renamed over another, so it is replaced by removing the old one
 * first: a hook starting in that moment fails once. The MCP server runs the Node itself (an .exe:
 * every CLI spawns one without a shell, where a .cmd needs cmd.exe's /c quoting, which cannot carry
 * a quoted program and a quoted argument at once).
 */
function refreshCmdLaunchers(dir: string, node: string, dist: string, electron: boolean, home: string): Launch {
  const bin = join(dir, 'bin');
  for (const [name, text] of Object.entries(cmdLaunchers(node, electron, home))) writeScript(join(bin, name), text);
  const link = join(dir, 'dist');
  removeLink(link);
  symlinkSync(dist, link, 'junction');
  return {
    node,
    dist: link,
    ...(electron ? { env: { ELECTRON_RUN_AS_NODE: '1' } } : {}),
    hook: join(bin, 'handoff-hook.cmd'),
  };
}

/**
 * The `.cmd` launchers, by file name: the hook and the CLI. Each runs `%~dp0..\dist\<js>`
 * (its own folder, from Windows in UTF-16, never re-read) with the arguments it was given. A Node
 * under the user's profile is written as `%USERPROFILE%\…`, since cmd.exe reads a `.cmd` in the
 * console's code page: a user name in any script reaches Node intact. Non-ASCII left elsewhere
 * switches the file to UTF-8 first (`chcp 65001`).
 */
export function cmdLaunchers(node: string, electron: boolean, home: string): Record<string, string> {
  const underHome = home !== '' && node.toLowerCase().startsWith(`${home.toLowerCase()}\\`);
  const nodeText = underHome ? `%USERPROFILE%${batchText(node.slice(home.length))}` : batchText(node);
  const utf8 = /[\u0080-\uffff]/.test(nodeText);
  const launcher = (what: string, script: string) =>
    [
      '@echo off',
      ...(utf8 ? ['chcp 65001 >nul'] : []),
      `rem Written by the Handoff extension at every activation: ${what}.`,
      'setlocal DisableDelayedExpansion',
      `set "NODE=${nodeText}"`,
      'if exist "%NODE%" goto run',
      '>&2 echo handoff: the Node this launcher names ("%NODE%") is gone: the editor was updated or removed. Open the folder in VS Code with Handoff once to refresh it.',
      'exit /b 127',
      ':run',
      ...(electron ? ['set "ELECTRON_RUN_AS_NODE=1"'] : []),
      `"%NODE%" "%~dp0..\\dist\\${script}" %*`,
      'exit /b %ERRORLEVEL%',
      '',
    ].join('\r\n');
  return {
    'handoff-hook.cmd': launcher('the Handoff hook agent CLIs run', 'hook.js'),
    'handoff.cmd': launcher('the handoff CLI', 'cli.js'),
  };
}

/** Removes a link, never what it points to: a junction is a folder to unlink, so rmdir takes it. */
function removeLink(path: string): void {
  try {
    unlinkSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EPERM' || code === 'EISDIR') rmdirSync(path);
    else if (code !== 'ENOENT') throw e;
  }
}

/** Replaced whole (write, then rename), so a CLI starting meanwhile runs the old or the new one. */
function writeScript(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o700 });
  chmodSync(tmp, 0o700);
  renameSync(tmp, path);
}

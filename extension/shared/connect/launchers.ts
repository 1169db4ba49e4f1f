// Stable launchers: what connect writes into agent configs must outlive editor and extension
// updates, which move both the editor's Node (the VS Code server's lives under a commit-named
// folder) and the extension's folder (versioned). So configs name `<data>/bin/node` and
// `<data>/dist/…`, and every activation of the extension points them at the current ones.
// `<data>/bin/handoff` is the CLI by the same route: a `handoff` of ours, where `npx handoff`
// outside a checkout would fetch an unrelated registry package of that name.
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Launch } from './launch';

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
export function refreshLaunchers(dir: string, node: string, dist: string, electron: boolean): Launch {
  mkdirSync(join(dir, 'bin'), { recursive: true, mode: 0o700 });
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

/** Replaced whole (write, then rename), so a CLI starting meanwhile runs the old or the new one. */
function writeScript(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o700 });
  chmodSync(tmp, 0o700);
  renameSync(tmp, path);
}

// Stable launchers: what connect writes into agent configs must outlive editor and extension
// updates, which move both the editor's Node (the VS Code server's lives under a commit-named
// folder) and the extension's folder (versioned). So configs name `<data>/bin/node` and
// `<data>/dist/…`, and every activation of the extension points them at the current ones.
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Launch } from './launch';

/** Where the launchers live: $XDG_DATA_HOME/handoff, else ~/.local/share/handoff. */
export function launcherDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'handoff');
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
  const tmp = `${bin}.${process.pid}.tmp`;
  writeFileSync(tmp, script, { mode: 0o700 });
  chmodSync(tmp, 0o700);
  renameSync(tmp, bin);
  // The build: a symlink replaced atomically, so a hook starting meanwhile finds the old or the new one.
  const link = join(dir, 'dist');
  const tmpLink = `${link}.${process.pid}.tmp`;
  rmSync(tmpLink, { force: true });
  symlinkSync(dist, tmpLink);
  renameSync(tmpLink, link);
  return { node: bin, dist: link };
}

// The launcher folder (`<data>/handoff/bin`) is first on every editor terminal's PATH and runs in
// every agent Connect set up (#42): the real CLI's `handoff connect` writes into it only when it is
// a real folder of ours nobody else may write; a symlink, or a folder others could write, is
// refused and nothing is written through it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DIST, NODE, tempDir } from '../helpers/hubProcess';

function connect(home: string, folder: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_STATE_HOME: join(home, 'state'),
  };
  return new Promise((resolve) =>
    execFile(
      NODE,
      [join(DIST, 'cli.js'), 'connect', 'claude', '--name', 'reviewer'],
      { cwd: folder, env },
      (e, stdout, stderr) => resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe('the launcher folder is ours or not used', () => {
  it('made private when it is new: handoff connect writes its launchers into a 0700 folder', async () => {
    const home = tempDir('launch-home');
    const r = await connect(home, tempDir('launch-folder'));
    assert.equal(r.code, 0, r.stderr);
    for (const dir of ['handoff', join('handoff', 'bin')])
      assert.equal(lstatSync(join(home, 'data', dir)).mode & 0o777, 0o700, dir);
    assert.ok(existsSync(join(home, 'data', 'handoff', 'bin', 'handoff')));
  });

  it('a bin that is a symlink to a folder of someone else is refused; nothing is written through it', async () => {
    const home = tempDir('launch-home');
    const elsewhere = tempDir('launch-elsewhere');
    mkdirSync(join(home, 'data', 'handoff'), { recursive: true, mode: 0o700 });
    symlinkSync(elsewhere, join(home, 'data', 'handoff', 'bin'));
    const folder = tempDir('launch-folder');
    const r = await connect(home, folder);
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, /bin is a symlink or not a directory/);
    assert.deepEqual(readdirSync(elsewhere), [], 'nothing written where the symlink points');
    assert.ok(!existsSync(join(folder, '.mcp.json')), 'no agent config naming those launchers');
  });

  it('a folder others may write is refused as found, with what they planted left for the user to see', async () => {
    const home = tempDir('launch-home');
    const bin = join(home, 'data', 'handoff', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'git'), '#!/bin/sh\necho planted\n', { mode: 0o755 });
    chmodSync(bin, 0o777);
    const r = await connect(home, tempDir('launch-folder'));
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, /bin may be written by others \(mode 777\)/);
    assert.ok(!existsSync(join(bin, 'handoff')), 'no launcher written beside what was planted');
  });
});

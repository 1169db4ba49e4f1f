// Each platform's pure parts, run here on Linux (#38): the socket or pipe a repository's hub
// listens on, the folder it sits in, what a machine can do and what the hub promises less without
// it. Every macOS and Windows case is one the Linux answer would fail. And the seam holds: no file
// but shared/platform asks which platform this is.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { hubSecretPath, ipcPath, maxSocketPath, runtimeBase } from '../../extension/shared/platform/ipcPath';
import { powersOf, weakerGuarantees } from '../../extension/shared/platform/powers';
import { keyPath } from '../../extension/shared/platform/workspacePath';
import { DIST, NODE, ROOT, tempDir } from '../helpers/hubProcess';

const key = '0123456789abcdef';
/** A macOS $TMPDIR: per user, under /var/folders (confstr _CS_DARWIN_USER_TEMP_DIR). */
const MAC_TMPDIR = '/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T';

describe('the hub socket or pipe for a repository key', () => {
  it('Windows: a named pipe carrying the user and the key, no folder', () => {
    const pipe = ipcPath({ platform: 'win32', key, runtimeDir: '', user: 'Ana María', uid: 'Ana María' });
    assert.equal(pipe, `\\\\.\\pipe\\handoff-Ana María-${key}`);
    assert.notEqual(pipe, ipcPath({ platform: 'win32', key, runtimeDir: '', user: 'bo', uid: 'bo' }), 'per user');
    assert.ok(
      !ipcPath({ platform: 'linux', key, runtimeDir: '/run/user/1000/handoff-1000', user: 'a', uid: 1000 }).startsWith(
        '\\\\.\\pipe\\',
      ),
    );
  });

  it("macOS: a typical $TMPDIR holds the socket; one past sun_path's 104 bytes falls back to /tmp, where Linux's 108 would not", () => {
    const at = (platform: NodeJS.Platform, runtimeDir: string) =>
      ipcPath({ platform, key, runtimeDir, user: 'ana', uid: 501 });
    const usual = `${MAC_TMPDIR}/handoff-501`;
    assert.equal(at('darwin', usual), `${usual}/hub-${key}.sock`);
    // A longer $TMPDIR (a sandboxed app's, a nested temp folder): 105 bytes in all.
    const long = `${MAC_TMPDIR}/${'x'.repeat(105 - `${MAC_TMPDIR}/`.length - `/hub-${key}.sock`.length)}`;
    assert.equal(Buffer.byteLength(`${long}/hub-${key}.sock`), 105);
    assert.equal(at('darwin', long), `/tmp/handoff-501/hub-${key}.sock`);
    assert.equal(at('linux', long), `${long}/hub-${key}.sock`, 'Linux binds 107 bytes');
    const tooLong = `${long}${'y'.repeat(10)}`;
    assert.equal(at('linux', tooLong), `/tmp/handoff-501/hub-${key}.sock`);
    assert.equal(maxSocketPath('darwin'), 103);
    assert.equal(maxSocketPath('linux'), 107);
  });

  it('bytes, not characters, decide: a folder name in UTF-8 counts each byte', () => {
    const dir = `/Users/${'é'.repeat(35)}/T/handoff-501`; // with the socket: 81 characters, 116 bytes
    assert.ok(`${dir}/hub-${key}.sock`.length <= 103);
    assert.equal(
      ipcPath({ platform: 'darwin', key, runtimeDir: dir, user: 'a', uid: 501 }),
      `/tmp/handoff-501/hub-${key}.sock`,
    );
  });

  it("the hub's secret: beside a socket, in its private folder; for a pipe, which has none, under the profile", () => {
    const pipe = ipcPath({ platform: 'win32', key, runtimeDir: '', user: 'Ana María', uid: 'Ana María' });
    assert.equal(
      hubSecretPath(pipe, 'C:\\Users\\Ana María\\.local\\state'),
      `C:\\Users\\Ana María\\.local\\state\\handoff\\pipes\\handoff-Ana María-${key}.secret`,
    );
    assert.ok(!`${pipe}.secret`.startsWith('C:'), 'the socket rule would name a pipe, not a file');
    assert.equal(
      hubSecretPath('/run/user/1000/handoff-1000/hub-k.sock', '/home/a/.local/state'),
      '/run/user/1000/handoff-1000/hub-k.sock.secret',
    );
  });

  it("the runtime folder: XDG's when it exists, else Linux's /run/user/<uid>, else the temp dir (macOS has no /run/user)", () => {
    const exists = (p: string) => p === '/run/user/501' || p === '/xdg';
    const base = (platform: NodeJS.Platform, xdgRuntimeDir?: string) =>
      runtimeBase({ platform, xdgRuntimeDir, uid: 501, tmpdir: MAC_TMPDIR, exists });
    assert.equal(base('linux'), '/run/user/501');
    assert.equal(base('darwin'), MAC_TMPDIR, 'not /run/user even where such a folder exists');
    assert.equal(base('darwin', '/xdg'), '/xdg');
    assert.equal(base('linux', '/gone'), '/run/user/501', 'a runtime dir that does not exist is passed over');
  });
});

describe("a workspace path's key form", () => {
  it('Windows: one folder, one key, whatever its case and slashes; Linux keeps both as they are', () => {
    const forms = ['C:\\Repo', 'c:\\repo', 'C:/Repo/', 'c:\\REPO\\', 'C:\\Repo\\.\\'];
    assert.deepEqual(new Set(forms.map((f) => keyPath('win32', f))), new Set(['c:\\repo']));
    assert.equal(new Set(forms.map((f) => keyPath('linux', f))).size, forms.length, 'the Linux rule: five hubs');
    assert.equal(keyPath('win32', 'C:\\'), 'c:\\', "a drive's root keeps its separator");
    assert.equal(keyPath('win32', '\\\\Server\\Share\\Repo'), '\\\\server\\share\\repo');
    assert.equal(keyPath('win32', 'C:\\Users\\ÉMILE\\Repo'), 'c:\\users\\émile\\repo');
    assert.equal(keyPath('linux', '/home/Ana/Repo'), '/home/Ana/Repo', 'Linux is case-sensitive');
    assert.equal(keyPath('darwin', '/Users/Ana/Repo'), '/Users/Ana/Repo');
  });
});

describe("a machine's powers", () => {
  it('Linux has them all; HANDOFF_POWERS_OFF turns procfs and tmux off, one by one, and nothing else', () => {
    assert.deepEqual(powersOf('linux', undefined, true), {
      procfs: true,
      tmux: true,
      dirSync: true,
      socketFiles: true,
      socketModes: true,
    });
    assert.deepEqual(powersOf('linux', 'procfs,tmux', true), {
      procfs: false,
      tmux: false,
      dirSync: true,
      socketFiles: true,
      socketModes: true,
    });
    assert.equal(powersOf('linux', 'tmux', true).procfs, true);
    assert.equal(powersOf('linux', ' procfs ', true).procfs, false);
    assert.deepEqual(powersOf('linux', 'dirSync,socketFiles', true), powersOf('linux', undefined, true));
    assert.equal(powersOf('linux', undefined, false).procfs, false, 'a Linux without /proc mounted');
    assert.deepEqual(powersOf('linux', 'socketmodes', true), {
      ...powersOf('linux', undefined, true),
      socketModes: false,
    });
  });

  it('macOS: no /proc proof whatever it has mounted; tmux, and a folder fsync (libuv F_FULLFSYNC)', () => {
    assert.deepEqual(powersOf('darwin', undefined, true), {
      procfs: false,
      tmux: true,
      dirSync: true,
      socketFiles: true,
      socketModes: true,
    });
  });

  it('Windows: no /proc, no tmux, no folder to fsync, a pipe instead of a socket file', () => {
    assert.deepEqual(powersOf('win32', undefined, false), {
      procfs: false,
      tmux: false,
      dirSync: false,
      socketFiles: false,
      socketModes: false,
    });
  });

  it('what the hub says it promises less: nothing on Linux, each missing power once', () => {
    assert.deepEqual(weakerGuarantees(powersOf('linux', undefined, true)), []);
    assert.deepEqual(weakerGuarantees(powersOf('darwin', undefined, false)), [
      "process proof off (no /proc): a hook's or a bridge's identity is stated, not proven",
    ]);
    const windows = weakerGuarantees(powersOf('win32', undefined, false));
    assert.equal(windows.length, 3);
    assert.match(windows[1], /^tmux wake off/);
    assert.match(windows[2], /^folder sync off/);
  });
});

describe('the seam', () => {
  it('no file but extension/shared/platform reads process.platform (the webview runs in no Node)', () => {
    const readers: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, e.name);
        if (e.isDirectory()) walk(path);
        else if (/\.ts$/.test(e.name) && readFileSync(path, 'utf8').includes('process.platform'))
          readers.push(relative(ROOT, path));
      }
    };
    walk(join(ROOT, 'extension'));
    assert.deepEqual(
      readers.filter((f) => !f.startsWith('extension/shared/platform/') && !f.startsWith('extension/webview/')),
      [],
    );
  });
});

/**
 * The ancestors the real hook states in its hello, run by a shell (as a CLI runs it) with `powersOff`.
 * A hook its time budget cuts off before the hello (a loaded machine) has said nothing: run it again.
 */
async function statedAncestors(powersOff: string): Promise<number[]> {
  const socket = join(tempDir('stated'), 'hub.sock');
  const server = createServer();
  const hello = new Promise<{ ancestors: number[] }>((resolve) => {
    server.on('connection', (c) => {
      let buf = '';
      c.on('data', (d: Buffer) => {
        buf += d.toString();
        if (!buf.includes('\n')) return;
        c.destroy();
        resolve(JSON.parse(buf.slice(0, buf.indexOf('\n'))));
      });
    });
  });
  await new Promise<void>((r) => server.listen(socket, r));
  try {
    for (let run = 1; ; run++) {
      const hook = spawn(
        'sh',
        ['-c', '"$0" "$@"; exit $?', NODE, join(DIST, 'hook.js'), 'codex', 'Stop', '--name', 'bob', '--hub', socket],
        {
          env: { PATH: process.env.PATH ?? '', HANDOFF_POWERS_OFF: powersOff },
          stdio: ['pipe', 'ignore', 'ignore'],
        },
      );
      hook.stdin.end('{}');
      const ended = new Promise<undefined>((r) => hook.on('exit', () => r(undefined)));
      const said = await Promise.race([hello, ended]);
      if (said) return said.ancestors;
      assert.ok(run < 20, `the hook said no hello in ${run} runs`);
    }
  } finally {
    server.close();
  }
}

describe('a hook without /proc', () => {
  it('states only its parent (the shell its CLI ran it in), where with /proc it states the chain', async () => {
    const proc = await statedAncestors('');
    assert.ok(proc.length > 1, `with /proc: ${proc}`);
    const none = await statedAncestors('procfs');
    assert.equal(none.length, 1, `without: ${none}`);
    assert.notEqual(none[0], process.pid, 'its parent, the shell');
  });
});

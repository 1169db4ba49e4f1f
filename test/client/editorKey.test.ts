// This window's side of the editor key, as data: a fresh 32-byte key per hub, kept in
// SecretStorage under the hub's socket (another socket's key is never presented), anything
// unreadable is no key, and the key goes to the hub in its environment, never its command line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EditorKeys, newEditorKey } from '../../extension/client/editorKey';
import { hubLaunch } from '../../extension/client/hubLaunch';
import { EDITOR_KEY_ENV, EDITOR_KEY_PATTERN } from '../../extension/protocol/editorKey';

/** SecretStorage as VS Code shares it between the windows of one user's editor: one map, one change event. */
function secretStorage() {
  const map = new Map<string, string>();
  const listeners = new Set<(e: { key: string }) => void>();
  return {
    map,
    listeners,
    get: (k: string) => Promise.resolve(map.get(k)),
    store: (k: string, v: string) => {
      map.set(k, v);
      for (const l of listeners) l({ key: k });
      return Promise.resolve();
    },
    onDidChange: (l: (e: { key: string }) => void) => {
      listeners.add(l);
      return { dispose: () => listeners.delete(l) };
    },
  };
}

describe('the editor key, on the window side', () => {
  it('is 32 random bytes, new each time', () => {
    const a = newEditorKey();
    assert.match(a, EDITOR_KEY_PATTERN);
    assert.notEqual(newEditorKey(), a);
  });

  it("another window finds the key under the hub's socket, and only there", async () => {
    const shared = secretStorage();
    const key = newEditorKey();
    await new EditorKeys(shared).remember('/run/user/1/handoff/a.sock', key);
    const otherWindow = new EditorKeys(shared);
    assert.equal(await otherWindow.recall('/run/user/1/handoff/a.sock'), key);
    assert.equal(await otherWindow.recall('/run/user/1/handoff/b.sock'), undefined, "another folder's hub");
  });

  it("tells a window when another keeps a key for its hub's socket, and only for it", async () => {
    const shared = secretStorage();
    const fired: string[] = [];
    const watch = new EditorKeys(shared).onDidStore('/a.sock', () => fired.push('a'));
    const first = new EditorKeys(shared);
    await first.remember('/b.sock', newEditorKey());
    assert.deepEqual(fired, [], "another hub's key");
    await first.remember('/a.sock', newEditorKey());
    assert.deepEqual(fired, ['a']);
    watch.dispose();
    assert.equal(shared.listeners.size, 0);
  });

  it('a stored value that is not a key, or a keyring that fails, is no key', async () => {
    const socket = '/s.sock';
    const odd = secretStorage();
    await new EditorKeys(odd).remember(socket, 'x');
    assert.equal(await new EditorKeys(odd).recall(socket), undefined);
    const broken = { get: () => Promise.reject(new Error('no keyring')), store: () => Promise.resolve() };
    assert.equal(await new EditorKeys(broken).recall(socket), undefined);
  });

  it('goes to the hub in its environment, never on its command line (/proc/PID/cmdline is world-readable)', () => {
    const key = newEditorKey();
    const { args, env } = hubLaunch(
      { workspace: '/w', folder: '/w', store: '/st', socket: '/s.sock' },
      '/ext',
      key,
      { PATH: '/bin' },
      42,
    );
    assert.equal(env[EDITOR_KEY_ENV], key);
    assert.equal(env.PATH, '/bin');
    assert.ok(!args.some((a) => a.includes(key)), args.join(' '));
    assert.deepEqual(args.slice(1, 3), ['--stdio', '--clientProcessId=42'], 'the transport flag first');
  });
});

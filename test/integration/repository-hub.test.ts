// One hub and one store per repository, with real hub processes and real bridges: a hub started
// for a worktree (a window on it) and one for the main checkout are the same hub; agents in either
// meet on it; a store a worktree had of its own before is adopted once, with a log line, nothing
// lost; two histories are never merged silently.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { spawnHub, stoppable, tempDir } from '../helpers/hubProcess';
import { workspaceKey } from '../../extension/shared/paths';
import { git } from '../helpers/git';

function repo() {
  const base = realpathSync(tempDir('repo-hub'));
  const root = join(base, 'R');
  mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'commit', '-q', '--allow-empty', '-m', 'init');
  const wt = join(base, 'wt-one');
  const wt2 = join(base, 'wt-two');
  git(root, 'worktree', 'add', '-q', '-b', 'one', wt);
  git(root, 'worktree', 'add', '-q', '-b', 'two', wt2);
  const state = join(base, 'state');
  const env = { XDG_STATE_HOME: state, HOME: join(base, 'home') };
  mkdirSync(env.HOME);
  const storeOf = (folder: string) => join(state, 'handoff', workspaceKey(folder));
  return { root, wt, wt2, env, storeOf };
}

async function hubFor(folder: string, store: string, env: Record<string, string>) {
  const h = spawnHub({ workspace: folder, store, socket: null, env });
  await h.ready;
  return { ...stoppable(h.proc), log: h.output };
}

const agent = (name: string, cwd: string, env: Record<string, string>): Promise<Agent> =>
  connectAgent({ socket: '', name, cwd, env, ownAgentProcess: true });

/** Every file under `dir`, names and bytes. */
function digest(dir: string): string {
  const h = createHash('sha256');
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => statSync(join(dir, f)).isFile());
  for (const f of files.sort()) h.update(f).update(readFileSync(join(dir, f)));
  return h.digest('hex');
}

describe('one hub and one store per repository', () => {
  it('a window on a worktree and one on the main checkout are one hub; agents in both meet on it', async () => {
    const r = repo();
    const hub = await hubFor(r.wt, r.storeOf(r.root), r.env);
    const second = spawnHub({ workspace: r.root, store: r.storeOf(r.root), socket: null, env: r.env });
    await assert.rejects(
      second.ready,
      /hub exited with 3/,
      'the main checkout finds the worktree window’s hub running',
    );
    const alice = await agent('alice', r.wt2, r.env);
    const bob = await agent('bob', r.root, r.env);
    try {
      const peers = (await alice.ok('list_peers')).peers as { identity: string; live_sessions: number }[];
      assert.deepEqual(
        peers
          .filter((p) => p.live_sessions > 0)
          .map((p) => p.identity)
          .sort(),
        ['alice', 'bob'],
      );
      const sent = await alice.ok('send_handoff', { to: 'bob', body: 'across checkouts' });
      assert.equal(sent.state, 'pushed');
      await bob.waitForPushes(1);
      assert.equal(bob.pushes.length, 1);
      assert.match(hub.log(), new RegExp(`for ${r.root} \\(store ${r.storeOf(r.root)}`));
    } finally {
      await alice.close();
      await bob.close();
      await hub.stop();
    }
  });

  it('two hubs never open one store, even on two sockets (windows whose runtime folders differ)', async () => {
    const r = repo();
    const hub = await hubFor(r.root, r.storeOf(r.root), r.env);
    const other = spawnHub({
      workspace: r.wt,
      store: r.storeOf(r.root),
      socket: null,
      env: { ...r.env, XDG_RUNTIME_DIR: tempDir('other-runtime') },
    });
    await assert.rejects(other.ready, /hub exited with 3 before listening/);
    assert.match(other.output(), /already serves the store .* on another socket/);
    await hub.stop();
  });

  it("a worktree's own store from before is adopted once, with a log line, nothing lost; a second history is left alone, said so", async () => {
    const r = repo();
    // As a per-folder Handoff left it: a hub whose store was keyed by the worktree's folder.
    const old = await hubFor(r.wt, r.storeOf(r.wt), r.env);
    const bob0 = await agent('bob', r.wt, r.env);
    await bob0.close();
    const alice0 = await agent('alice', r.wt, r.env);
    const ids: string[] = [];
    for (const k of [1, 2, 3])
      ids.push((await alice0.ok('send_handoff', { to: 'bob', body: `old mail ${k}` })).message_id);
    await alice0.close();
    await old.stop();

    const hub = await hubFor(r.wt, r.storeOf(r.root), r.env);
    assert.match(hub.log(), /store migrated: .*wt-one had a store of its own/);
    const bob = await agent('bob', r.root, r.env);
    try {
      const inbox = (await bob.ok('inbox', {})).messages as { message_id: string }[];
      assert.deepEqual(inbox.map((m) => m.message_id).sort(), [...ids].sort(), 'all three queued handoffs are there');
    } finally {
      await bob.close();
      await hub.stop();
    }
    const again = await hubFor(r.root, r.storeOf(r.root), r.env);
    assert.doesNotMatch(again.log(), /migrated/, 'once');
    await again.stop();

    // Another worktree with a store of its own, now that the repository has one: kept as it is, and said.
    const other = await hubFor(r.wt2, r.storeOf(r.wt2), r.env);
    const carol = await agent('carol', r.wt2, r.env);
    await carol.ok('send_handoff', { to: 'carol', body: 'note to self' });
    await carol.close();
    await other.stop();
    const before = digest(r.storeOf(r.wt2));
    const last = await hubFor(r.root, r.storeOf(r.root), r.env);
    await last.stop();
    assert.match(last.log(), /store NOT migrated: .*wt-two has a store of its own .* are kept there, untouched/);
    assert.equal(digest(r.storeOf(r.wt2)), before, 'byte for byte');
  });
});

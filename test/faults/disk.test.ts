// G4 for the store: an unwritable, full or read-only store is a clear tool error that says
// nothing was sent; the hub keeps serving; nothing acknowledged is lost, nothing refused appears.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connectAgent, plainBody } from '../helpers/agent';
import { startHub, tempDir } from '../helpers/hubProcess';
import type { Message } from '../../extension/hub/bus/model';
import { Store } from '../../extension/hub/store/store';
import { skipOrFail } from '../helpers/skip.mjs';

/** undefined once a small tmpfs is mounted on dir, else why it could not be (it needs root). */
function tryMount(dir: string, sizeKb: number): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return `the full/read-only disk test cannot mount a small tmpfs here (${(e as Error).message.split('\n')[0]}); it needs root`;
  }
}

describe('G4: the store cannot be written', () => {
  const mounts: string[] = [];
  after(() => {
    for (const m of mounts) {
      try {
        execFileSync('umount', ['-l', m], { stdio: 'pipe' });
      } catch {
        /* already gone */
      }
    }
  });

  it('a store path that cannot be created: the hub serves and every send says why', async () => {
    const base = tempDir('blocked');
    writeFileSync(join(base, 'file'), 'not a directory');
    const hub = await startHub({ store: join(base, 'file', 'store') });
    try {
      const a = await connectAgent({ socket: hub.socket, name: 'alice' });
      const r = await a.call('send_handoff', { to: 'alice', body: 'hello' });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.error.code, 'store_unavailable');
      assert.match((r.content[0] as any).text, /could not write its store in .*file\/store \((ENOTDIR|EEXIST)/);
      assert.match((r.content[0] as any).text, /Nothing was sent/);
      assert.equal((await a.ok('whoami')).identity, 'alice', 'still serving');
      await a.close();
    } finally {
      await hub.stop();
    }
  });

  it('disk full, then read-only: clear errors, the hub keeps serving, 0 lost and 0 phantom messages', async (t) => {
    const dir = tempDir('tmpfs');
    const unmountable = tryMount(dir, 256);
    if (unmountable) return skipOrFail(t, unmountable);
    mounts.push(dir);
    const store = join(dir, 'store');
    mkdirSync(store);
    let hub = await startHub({ store });
    const acknowledged: string[] = [];
    const refused: string[] = [];
    try {
      const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
      const bob = await connectAgent({ socket: hub.socket, name: 'bob' });
      await bob.close();
      let errorText = '';
      for (let i = 0; i < 200 && refused.length < 3; i++) {
        const body = `${i} `.padEnd(8000, 'x');
        const r = await alice.call('send_handoff', { to: 'bob', body });
        if (r.isError) {
          assert.equal(r.structuredContent.error.code, 'store_unavailable');
          errorText = (r.content[0] as any).text;
          refused.push(body);
        } else acknowledged.push(body);
      }
      assert.ok(refused.length > 0, 'the disk filled up');
      assert.match(errorText, /ENOSPC/);
      assert.match(errorText, /Free disk space or fix the folder's permissions/);
      assert.equal((await alice.ok('whoami')).identity, 'alice', 'still serving');

      // Read-only (a mount cannot turn read-only under open writers, so the hub starts on it).
      await alice.close();
      await hub.stop();
      execFileSync('mount', ['-o', 'remount,ro', dir]);
      hub = await hub.restart();
      const ro = await connectAgent({ socket: hub.socket, name: 'alice' });
      const r = await ro.call('send_handoff', { to: 'bob', body: 'while read-only' });
      assert.equal(r.structuredContent.error.code, 'store_unavailable');
      assert.match((r.content[0] as any).text, /EROFS/);
      assert.equal((await ro.ok('whoami')).identity, 'alice', 'still serving');
      refused.push('while read-only');
      await ro.close();
      await hub.stop();
      execFileSync('mount', ['-o', 'remount,rw', dir]);
      hub = await hub.restart();

      const writer = await connectAgent({ socket: hub.socket, name: 'alice' });
      const later = await writer.ok('send_handoff', { to: 'bob', body: 'after the disk came back' });
      acknowledged.push('after the disk came back');
      assert.ok(later.message_id);
      await writer.close();
      await hub.kill9();
      hub = await hub.restart();
      const reader = await connectAgent({ socket: hub.socket, name: 'bob' });
      const inbox = await reader.ok('inbox', { limit: 200 });
      const bodies = inbox.messages.map(plainBody);
      const lost = acknowledged.filter((b) => !bodies.includes(b));
      const phantom = refused.filter((b) => bodies.includes(b));
      const duplicated = bodies.length - new Set(bodies).size;
      console.log(
        `# full disk: ${acknowledged.length} acknowledged, ${refused.length} refused, lost ${lost.length}, phantom ${phantom.length}, duplicated ${duplicated}`,
      );
      assert.equal(lost.length, 0);
      assert.equal(phantom.length, 0, 'a refused send must not appear later');
      assert.equal(duplicated, 0);
      await reader.close();
    } finally {
      await hub.stop();
      rmSync(store, { recursive: true, force: true });
    }
  });

  it('a batch refused for space, then space comes back: the next send is acknowledged and survives a restart (the journal was cut back to a clean line, no gap)', async (t) => {
    const dir = tempDir('tmpfs-cut');
    const unmountable = tryMount(dir, 256);
    if (unmountable) return skipOrFail(t, unmountable);
    mounts.push(dir);
    const storeDir = join(dir, 'store');
    const filler = join(dir, 'filler');
    writeFileSync(filler, Buffer.alloc(160 * 1024));
    const store = await Store.open(storeDir, 'n', { idempotencyWindowMs: 60_000, minCheckpointBytes: 1 << 30 });
    const msg = (id: string, bytes: number): Message => ({
      id,
      seq: 1,
      from: 'alice',
      address: ['bob'],
      recipients: ['bob'],
      thread: id,
      body: 'x'.repeat(bytes),
      attachments: [],
      requiresAck: true,
      slaMs: 60_000,
      ttlMs: 3_600_000,
      sentAt: Date.now(),
      sentBySession: 's',
      node: 'n',
    });
    await store.commit([{ type: 'sent', message: msg('01JD3V7W2K8Q5X9Y4Z6A1B0001', 1000) }]);
    await assert.rejects(
      store.commit([{ type: 'sent', message: msg('01JD3V7W2K8Q5X9Y4Z6A1B0002', 200_000) }]),
      /ENOSPC/,
    );
    rmSync(filler);
    await store.commit([{ type: 'sent', message: msg('01JD3V7W2K8Q5X9Y4Z6A1B0003', 1000) }]);
    // No close: as after kill -9, the next open reads the journal as it is.
    const again = await Store.open(storeDir, 'n', { idempotencyWindowMs: 60_000 });
    assert.deepEqual(
      Object.keys(again.state.hot).sort(),
      ['01JD3V7W2K8Q5X9Y4Z6A1B0001', '01JD3V7W2K8Q5X9Y4Z6A1B0003'],
      'both acknowledged sends, not the refused one',
    );
    await again.close();
  });
});

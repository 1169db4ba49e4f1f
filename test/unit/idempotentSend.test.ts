// G6 at the hub, in process, on a real disk and the hub's injected clock: one instruction is stored
// once — two identical sends racing, the same body again after a hub restart — while a send that
// failed to be stored leaves nothing behind that would swallow its retry.
import assert from 'node:assert/strict';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BusError } from '../../extension/hub/bus/errors';
import { Hub } from '../../extension/hub/hub';
import { tempDir } from '../helpers/hubProcess';

const alice = { identity: 'alice', session: 'a-1', node: 'n' };
const WINDOW = 60_000;

function hubOn(store: string, clock: () => number): Hub {
  return new Hub({
    workspace: tempDir('g6-ws'),
    storeDir: store,
    node: 'n',
    tickMs: 0,
    clock,
    limits: { duplicateWindowMs: WINDOW },
  });
}

describe('G6: idempotent sends at the hub', () => {
  it('the same body sent twice at once (no key) is stored once; the second answer names the first', async () => {
    const hub = hubOn(tempDir('g6-race'), Date.now);
    await hub.start();
    try {
      await hub.remember('bob');
      const answers = await Promise.all(
        [1, 2, 3].map(() => hub.send(alice, { to: ['bob'], body: 'run the migrations' })),
      );
      assert.equal(new Set(answers.map((a) => a.message_id)).size, 1, 'one message');
      assert.deepEqual(
        answers.map((a) => a.duplicate?.why),
        [undefined, 'probable_duplicate', 'probable_duplicate'],
      );
      assert.equal(hub.inbox('bob').length, 1);
    } finally {
      await hub.close();
    }
  });

  it('after a restart the same body inside the window is still a probable duplicate; past it, a new message', async () => {
    let t = 1_800_000_000_000;
    const store = tempDir('g6-restart');
    let hub = hubOn(store, () => t);
    await hub.start();
    await hub.remember('bob');
    const first = await hub.send(alice, { to: ['bob'], body: 'deploy staging' });
    await hub.close();
    t += WINDOW / 2;
    hub = hubOn(store, () => t);
    await hub.start();
    try {
      const again = await hub.send(alice, { to: ['bob'], body: 'deploy staging' });
      assert.equal(
        again.message_id,
        first.message_id,
        'the agent re-read its transcript after the restart: nothing new',
      );
      assert.equal(again.duplicate?.why, 'probable_duplicate');
      t += WINDOW;
      const later = await hub.send(alice, { to: ['bob'], body: 'deploy staging' });
      assert.notEqual(later.message_id, first.message_id, 'past the window it is a new instruction');
      assert.equal(hub.inbox('bob').length, 2);
    } finally {
      await hub.close();
    }
  });

  it('a send the store refused is not remembered: its retry is stored, not answered as a duplicate of nothing', async () => {
    const dir = tempDir('g6-fail');
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const datasync = proto.datasync;
    const hub = hubOn(join(dir, 'store'), Date.now);
    await hub.start();
    try {
      await hub.remember('bob');
      // The disk fails the next fdatasync (EIO), as a dying disk or a full thin volume does.
      proto.datasync = function (this: FileHandle) {
        proto.datasync = datasync;
        return Promise.reject(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
      };
      await assert.rejects(
        hub.send(alice, { to: ['bob'], body: 'ship it', idempotencyKey: 'ship-1' }),
        (e) => e instanceof BusError && e.code === 'store_unavailable',
      );
      assert.equal(hub.inbox('bob').length, 0, 'nothing was stored');
      const retry = await hub.send(alice, { to: ['bob'], body: 'ship it', idempotencyKey: 'ship-1' });
      assert.equal(retry.duplicate, undefined, 'the retry is the first real send');
      assert.deepEqual(
        hub.inbox('bob').map((i) => i.message.id),
        [retry.message_id],
      );
      proto.datasync = function (this: FileHandle) {
        proto.datasync = datasync;
        return Promise.reject(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
      };
      await assert.rejects(
        hub.send(alice, { to: ['bob'], body: 'and tag it' }),
        (e) => e instanceof BusError && e.code === 'store_unavailable',
      );
      const keyless = await hub.send(alice, { to: ['bob'], body: 'and tag it' });
      assert.equal(keyless.duplicate, undefined, 'without a key too');
      assert.equal(hub.inbox('bob').length, 2);
    } finally {
      proto.datasync = datasync;
      await hub.close();
    }
  });

  it('a send the bridge sends again with its resend key, after a hub restart, lands once; an insisted one too, and the probable-duplicate check stays on', async () => {
    let t = 1_800_000_000_000;
    const store = tempDir('g6-resend');
    let hub = hubOn(store, () => t);
    await hub.start();
    await hub.remember('bob');
    const first = await hub.send(alice, { to: ['bob'], body: 'rotate the keys', insist: true, resendKey: 'b-1:1' });
    await hub.close(); // the answer never reached the bridge
    t += 2000;
    hub = hubOn(store, () => t);
    await hub.start();
    try {
      const again = await hub.send(alice, { to: ['bob'], body: 'rotate the keys', insist: true, resendKey: 'b-1:1' });
      assert.equal(again.message_id, first.message_id, 'the same call, sent again: nothing new');
      assert.equal(again.duplicate?.why, 'resent');
      const retyped = await hub.send(alice, { to: ['bob'], body: 'rotate the keys', resendKey: 'b-1:2' });
      assert.equal(retyped.duplicate?.why, 'probable_duplicate', 'a new call of the same words is still caught');
      const meant = await hub.send(alice, { to: ['bob'], body: 'rotate the keys', insist: true, resendKey: 'b-1:3' });
      assert.equal(meant.duplicate, undefined, 'a new call that insists is a new message');
      assert.equal(hub.inbox('bob').length, 2);
    } finally {
      await hub.close();
    }
  });
  it('a message done and archived by a checkpoint is still a probable duplicate inside the window, its body read right', async () => {
    const dir = tempDir('g6-archived');
    const bob = { identity: 'bob', session: 'b-1', node: 'n' };
    // A checkpoint after every batch: the first leaves the body in its document, the next archives it.
    const hub = new Hub({
      workspace: tempDir('g6-ws'),
      storeDir: dir,
      node: 'n',
      tickMs: 0,
      limits: { duplicateWindowMs: WINDOW },
      store: { checkpointAtBytes: 1 },
    });
    await hub.start();
    try {
      await hub.remember('bob');
      const first = await hub.send(alice, { to: ['bob'], body: 'rotate the signing key' });
      for (let i = 0; i < 3; i++) await hub.send(alice, { to: ['bob'], body: `filler ${i}`, insist: true });
      await hub.receipt(bob, first.message_id, 'result', 'done', 'rotated');
      for (let i = 3; hub.state.hot[first.message_id]; i++) {
        assert.ok(i < 200, 'a checkpoint archived the finished message');
        await hub.send(alice, { to: ['bob'], body: `filler ${i}`, insist: true });
      }
      for (let i = 0; i < 5; i++) await hub.send(alice, { to: ['bob'], body: `after ${i}`, insist: true });
      const again = await hub.send(alice, { to: ['bob'], body: 'rotate the signing key' });
      assert.equal(again.message_id, first.message_id, 'the same instruction again, inside the window');
      assert.equal(again.duplicate?.why, 'probable_duplicate');
    } finally {
      await hub.close();
    }
  });
});

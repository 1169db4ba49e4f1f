// An encrypted room's device, without a homeserver: the crypto store survives a restart byte for
// byte (what lets a hub stay one device), device claims are believed only under the node's key,
// and events kept for their keys survive a restart, a failed write of theirs too.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CryptoStore } from '../../extension/hub/matrix/cryptoStore';
import { claimValid, DeviceClaims, signDevice, trustOf } from '../../extension/hub/matrix/deviceTrust';
import { KeptEvents } from '../../extension/hub/matrix/keptEvents';
import { loadNodeKey } from '../../extension/hub/matrix/keys';
import { CrashFs } from '../helpers/crashFs';
import { tempDir } from '../helpers/hubProcess';

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function fill(factory: IDBFactory): Promise<void> {
  const open = factory.open('app::crypto', 3);
  open.onupgradeneeded = () => {
    const db = open.result;
    const sessions = db.createObjectStore('sessions', { keyPath: ['room', 'id'] });
    sessions.createIndex('byRoom', 'room', { unique: false });
    db.createObjectStore('core');
  };
  const db = await request(open);
  const tx = db.transaction(['sessions', 'core'], 'readwrite');
  tx.objectStore('sessions').put({ room: '!r', id: 's1', key: new Uint8Array([1, 2, 3]) });
  tx.objectStore('sessions').put({ room: '!q', id: 's2', key: new Uint8Array([4]) });
  tx.objectStore('core').put({ pickled: 'account' }, 'account');
  await new Promise((r) => (tx.oncomplete = r));
  db.close();
}

describe('the crypto store', () => {
  it('comes back after a restart with every record, key and index, and is written only when it changed', async () => {
    const dir = tempDir('crypto');
    const path = join(dir, 'device.v8');
    const first = new CryptoStore(path, 'app::');
    assert.equal(await first.open(), 'new');
    await fill(first.factory);
    await first.save();
    assert.equal(statSync(path).mode & 0o777, 0o600, 'private to the user');
    const written = statSync(path).mtimeMs;
    await first.save();
    assert.equal(statSync(path).mtimeMs, written, 'unchanged: not written again');

    const second = new CryptoStore(path, 'app::');
    assert.equal(await second.open(), 'restored');
    const db = await request(second.factory.open('app::crypto'));
    assert.equal(db.version, 3, 'same version: the owner sees no upgrade');
    const tx = db.transaction(['sessions', 'core']);
    const byRoom = await request(tx.objectStore('sessions').index('byRoom').getAll('!r'));
    assert.deepEqual(byRoom, [{ room: '!r', id: 's1', key: new Uint8Array([1, 2, 3]) }]);
    assert.deepEqual(await request(tx.objectStore('core').get('account')), { pickled: 'account' });
    db.close();
  });

  it('a snapshot it cannot read is an error, never a new device', async () => {
    const dir = tempDir('crypto');
    const path = join(dir, 'device.v8');
    const s = new CryptoStore(path, 'app::');
    await s.open();
    await s.save();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, 'not a snapshot');
    await assert.rejects(new CryptoStore(path, 'app::').open());
  });
});

describe('device claims', () => {
  const keyA = loadNodeKey(tempDir('nodeA'));
  const keyB = loadNodeKey(tempDir('nodeB'));

  it("are believed only under the claiming node's key, for its account and device", () => {
    const c = signDevice(keyA, 'nodeA', '@a:x', 'DEV', 'ed');
    assert.ok(claimValid(keyA.publicKey, 'nodeA', '@a:x', c));
    assert.ok(!claimValid(keyB.publicKey, 'nodeA', '@a:x', c), "another node's key");
    assert.ok(!claimValid(keyA.publicKey, 'nodeB', '@a:x', c), 'another node');
    assert.ok(!claimValid(keyA.publicKey, 'nodeA', '@m:x', c), 'another account');
    assert.ok(!claimValid(keyA.publicKey, 'nodeA', '@a:x', { ...c, id: 'EVIL' }), 'another device');
    assert.ok(!claimValid(keyA.publicKey, 'nodeA', '@a:x', { ...c, ed25519: 'other' }), 'another device key');
  });

  it("verify a hub's device, refuse its account's other devices, and leave people's unverified", () => {
    const claims = new DeviceClaims();
    assert.ok(claims.note('nodeA', '@a:x', keyA.publicKey, signDevice(keyA, 'nodeA', '@a:x', 'DEV', 'ed')));
    const hubs = new Set(['@a:x', '@me:x']);
    const me = { user: '@me:x', id: 'MINE' };
    assert.equal(trustOf({ user: '@a:x', id: 'DEV', ed25519: 'ed' }, me, claims, hubs), 'verified');
    assert.equal(trustOf({ user: '@a:x', id: 'DEV', ed25519: 'swapped' }, me, claims, hubs), 'refused');
    assert.equal(trustOf({ user: '@a:x', id: 'NEW', ed25519: 'ed' }, me, claims, hubs), 'refused');
    assert.equal(trustOf({ user: '@me:x', id: 'MINE' }, me, claims, hubs), 'this hub');
    assert.equal(trustOf({ user: '@me:x', id: 'OTHER' }, me, claims, hubs), 'refused');
    assert.equal(trustOf({ user: '@carol:x', id: 'PHONE', ed25519: 'c' }, me, claims, hubs), 'unverified');
    // A claim the node's key did not sign changes nothing: it cannot void or replace the device.
    assert.ok(!claims.note('nodeA', '@a:x', keyA.publicKey, signDevice(keyB, 'nodeA', '@a:x', 'EVIL', 'ev')));
    assert.equal(trustOf({ user: '@a:x', id: 'DEV', ed25519: 'ed' }, me, claims, hubs), 'verified');
    assert.equal(trustOf({ user: '@a:x', id: 'EVIL', ed25519: 'ev' }, me, claims, hubs), 'refused');
    // The node's own new claim (a new login, a new device) replaces the old one.
    assert.ok(claims.note('nodeA', '@a:x', keyA.publicKey, signDevice(keyA, 'nodeA', '@a:x', 'DEV2', 'ed2')));
    assert.equal(trustOf({ user: '@a:x', id: 'DEV', ed25519: 'ed' }, me, claims, hubs), 'refused');
    assert.equal(trustOf({ user: '@a:x', id: 'DEV2', ed25519: 'ed2' }, me, claims, hubs), 'verified');
  });
});

describe('events kept for later', () => {
  const ev = (id: string) => ({
    event_id: id,
    type: 'm.room.encrypted',
    sender: '@a:x',
    origin_server_ts: 1,
    content: {},
  });

  it('survive a restart, are forgotten once settled, and are given up after a day', async () => {
    const path = join(tempDir('kept'), 'kept.json');
    const kept = await KeptEvents.open(path);
    await kept.keep([ev('$1'), ev('$2')], 1000);
    await kept.keep([ev('$2')], 2000); // already kept: not twice
    const again = await KeptEvents.open(path);
    assert.deepEqual(
      again.due(5000).events.map((e) => e.event_id),
      ['$1', '$2'],
    );
    await again.done(new Set(['$1']));
    const later = await KeptEvents.open(path);
    assert.deepEqual(
      later.due(5000).events.map((e) => e.event_id),
      ['$2'],
    );
    const { events, givenUp } = later.due(1000 + 24 * 3600_000 + 1);
    assert.deepEqual([events.length, givenUp.map((e) => e.event_id), later.givenUp], [0, ['$2'], 1]);
  });

  it('a failed write keeps nothing: the retried sync keeps the event again, and a restart finds it', async () => {
    const fs = new CrashFs();
    await fs.mkdirs('/store', 0o700);
    const path = '/store/room.undecrypted.json';
    const kept = await KeptEvents.open(path, fs);
    fs.faults.push({ call: 'write', path: /undecrypted/, code: 'ENOSPC' });
    await assert.rejects(kept.keep([ev('$1')], 1000), /ENOSPC/);
    // The sync failed before its position moved; ingest asks has() to decide whether to keep again.
    assert.equal(kept.has('$1'), false, 'not kept: the file does not hold it');
    await kept.keep([ev('$1')], 2000);
    const restarted = await KeptEvents.open(path, fs);
    assert.deepEqual(
      restarted.due(5000).events.map((e) => e.event_id),
      ['$1'],
    );
    fs.faults.push({ call: 'write', path: /undecrypted/, code: 'EIO' });
    await assert.rejects(restarted.done(new Set(['$1'])), /EIO/);
    assert.ok(restarted.has('$1'), 'still kept: the file still holds it');
  });
});

// A session's replay cache (what lets a reconnecting client get the answer to a request it already
// sent) lives as long as the session may come back: through a reconnect, then released once the
// session has been gone past the grace period — caches do not pile up with every key ever seen.
import assert from 'node:assert/strict';
import type { Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Hub } from '../../extension/hub/hub';
import { listen } from '../../extension/hub/listen';
import type { ReplayCache } from '../../extension/hub/mcp/replayCache';
import { connectAgent } from '../helpers/agent';
import { tempDir } from '../helpers/hubProcess';

describe('replay caches are released when their session is gone', () => {
  const caches = new Map<string, ReplayCache>();
  let hub: Hub;
  let server: Server;
  let socket: string;
  const GRACE_MS = 1500;

  before(async () => {
    hub = new Hub({ workspace: tempDir('replay-ws'), storeDir: tempDir('replay-store'), node: 'n' });
    await hub.start();
    socket = join(tempDir('replay-sock'), 'hub.sock');
    server = await listen(hub, socket, { heartbeatMs: 60_000, log: () => undefined, replayGraceMs: GRACE_MS, replayCaches: caches });
  });
  after(async () => {
    server.close();
    await hub.close();
  });

  it('keeps a stable key\'s cache through a reconnect, and frees it after the grace period', async () => {
    const first = await connectAgent({ socket, name: 'rita', session: 'rita-1' });
    await first.ok('whoami');
    assert.ok((caches.get('rita-1')?.size ?? 0) > 0, 'the answer is cached');
    await first.close();
    await sleep(GRACE_MS / 3);
    const again = await connectAgent({ socket, name: 'rita', session: 'rita-1' });
    await sleep(GRACE_MS * 1.5);
    assert.ok(caches.has('rita-1'), 'a session that came back within the grace keeps its cache while connected');
    await again.close();
    for (let i = 0; i < 40 && caches.has('rita-1'); i++) await sleep(GRACE_MS / 10);
    assert.equal(caches.has('rita-1'), false, 'gone past the grace: released');
  });

  it('a random key\'s cache goes with its connection', async () => {
    const anon = await connectAgent({ socket, name: 'sam' });
    await anon.ok('whoami');
    const keys = [...caches.keys()].filter((k) => k.startsWith('s-'));
    assert.equal(keys.length, 1);
    await anon.close();
    for (let i = 0; i < 20 && caches.has(keys[0]); i++) await sleep(50);
    assert.equal(caches.has(keys[0]), false);
  });
});

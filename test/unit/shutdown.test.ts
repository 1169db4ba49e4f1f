// A hub that is stopping refuses writes as a shutdown, not as a disk fault: a sender told to
// "free disk space" would look for a problem that is not there instead of retrying.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BusError } from '../../extension/hub/bus/errors';
import { Hub } from '../../extension/hub/hub';
import { tempDir } from '../helpers/hubProcess';

const alice = { identity: 'alice', session: 'a-1', node: 'n' };
const bob = { identity: 'bob', session: 'b-1', node: 'n' };

function isShutdown(e: unknown): boolean {
  assert.ok(e instanceof BusError, `a BusError, not ${String(e)}`);
  assert.equal(e.code, 'shutting_down', e.message);
  assert.match(e.message, /shutting down.*Retry/s);
  assert.doesNotMatch(e.message, /disk space/);
  return true;
}

describe('shutdown', () => {
  it('a send or receipt while the hub closes, or after, is refused as a shutdown, with a retry', async () => {
    const hub = new Hub({ workspace: tempDir('stop-ws'), storeDir: tempDir('stop-store'), node: 'n', tickMs: 0 });
    await hub.start();
    await hub.remember('bob');
    const sent = await hub.send(alice, { to: ['bob'], body: 'before the stop' });
    const closing = hub.close();
    await new Promise((r) => setImmediate(r)); // past the link's close: the store is closing
    await assert.rejects(hub.send(alice, { to: ['bob'], body: 'while it stops' }), isShutdown);
    await closing;
    await assert.rejects(hub.send(alice, { to: ['bob'], body: 'after it stopped' }), isShutdown);
    await assert.rejects(hub.receipt(bob, sent.message_id, 'ack'), isShutdown);
  });
});

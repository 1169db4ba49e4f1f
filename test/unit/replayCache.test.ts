// The replay cache answers a resent call that changes the bus from its first result — within one
// connection only, and never a read. A client that reconnects with the same session key starts
// its JSON-RPC ids again: it must get fresh answers, and a new send with an old id must be sent.
import assert from 'node:assert/strict';
import type { Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { listen } from '../../extension/hub/serve/listen';
import { connectAgent } from '../helpers/agent';
import { rawAgent, type RawAgent } from '../helpers/rawAgent';
import { tempDir } from '../helpers/hubProcess';

describe('the replay cache serves one connection, and only calls that change the bus', () => {
  let hub: Hub;
  let server: Server;
  let socket: string;

  before(async () => {
    hub = new Hub({ workspace: tempDir('replay-ws'), storeDir: tempDir('replay-store'), node: 'n' });
    await hub.start();
    socket = join(tempDir('replay-sock'), 'hub.sock');
    server = await listen(hub, socket, { heartbeatMs: 60_000, log: () => undefined });
  });
  after(async () => {
    server.close();
    await hub.close();
  });

  const connect = async (): Promise<RawAgent> => {
    const a = await rawAgent(socket, { identity: 'rita', session: 'rita-stable' });
    await a.initialize();
    return a;
  };
  const call = (a: RawAgent, id: number, name: string, args: Record<string, unknown> = {}) =>
    a.request(id, 'tools/call', { name, arguments: args });

  it('a reconnect with the same key and the same ids gets fresh reads and sends anew', async () => {
    const sam = await connectAgent({ socket, name: 'sam' });
    try {
      const first = await connect();
      call(first, 1, 'get_unread_summary');
      assert.equal((await first.response(1)).result.structuredContent.unread, 0);
      call(first, 2, 'send_handoff', { to: 'sam', body: 'same words, same id', insist: true });
      const sent = (await first.response(2)).result.structuredContent;
      first.close();
      for (let i = 0; i < 3; i++) await sam.ok('send_handoff', { to: 'rita', body: `for rita ${i}` });

      const again = await connect();
      call(again, 1, 'get_unread_summary');
      assert.equal(
        (await again.response(1)).result.structuredContent.unread,
        3,
        "not the first connection's answer to id 1",
      );
      call(again, 2, 'send_handoff', { to: 'sam', body: 'same words, same id', insist: true });
      const resent = (await again.response(2)).result.structuredContent;
      assert.notEqual(
        resent.message_id,
        sent.message_id,
        'a new send on a new connection is sent, not answered from the old one',
      );
      assert.equal(resent.duplicate, undefined);
      again.close();
    } finally {
      await sam.close();
    }
  });

  it('within one connection a resent send is answered once from its first result, a resent read runs again', async () => {
    const a = await connect();
    try {
      call(a, 7, 'send_handoff', { to: 'sam', body: 'resent on one connection', insist: true });
      const first = (await a.response(7)).result.structuredContent;
      call(a, 7, 'send_handoff', { to: 'sam', body: 'resent on one connection', insist: true });
      const second = (await a.response(7, 2)).result.structuredContent;
      assert.equal(second.message_id, first.message_id, 'the resend got the first answer');
      assert.equal(
        hub.pending('rita').filter((e) => e.preview.includes('resent on one connection')).length,
        1,
        'stored once',
      );

      call(a, 8, 'get_unread_summary');
      const before = (await a.response(8)).result.structuredContent.unacked;
      const sam = await connectAgent({ socket, name: 'sam' });
      await sam.ok('send_handoff', { to: 'rita', body: 'one more' });
      await sam.close();
      call(a, 8, 'get_unread_summary');
      assert.equal(
        (await a.response(8, 2)).result.structuredContent.unacked,
        before + 1,
        'a read with a resent id runs again',
      );
    } finally {
      a.close();
    }
  });
});

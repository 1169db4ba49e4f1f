// The editor key over the real hub process (dist/hub.js, started as an editor window starts it:
// --stdio, the key in its environment). A socket control connection is an editor window only with
// that key: without it, or with a wrong one, it is `cli` and cannot write the person's read, ack,
// result or resolve, nor connect or disconnect Matrix (a clear error, nothing recorded or changed);
// with it, all of that works and the receipts say `editor`. A headless hub has no key to honour.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  call,
  MatrixConnectRequest,
  MatrixDisconnectRequest,
  MessageRequest,
  PresenceRequest,
  ReceiptRequest,
  ResolveRequest,
  SnapshotRequest,
} from '../../extension/protocol/control';
import { EDITOR_KEY_ENV } from '../../extension/protocol/editorKey';
import { connectControl, type ControlClient } from '../../extension/shared/controlClient';
import { connectAgent, type Agent } from '../helpers/agent';
import { startHub, type HubProcess } from '../helpers/hubProcess';

const KEY = randomBytes(32).toString('hex');
// A homeserver nothing listens on: the link exists (connecting), and no event ever leaves.
const MATRIX = { homeserver: 'http://127.0.0.1:9', accessToken: 'syt_not_a_real_token', room: '!bus:localhost' };

type Refusal = { message: string; data?: { code?: string } };
const refusal = (p: Promise<unknown>): Promise<Refusal> =>
  p.then(
    (v) => assert.fail(`expected a refusal, got ${JSON.stringify(v)}`),
    (e: Refusal) => e,
  );

describe('the editor key: a socket control connection is an editor window only with its hub key', () => {
  let hub: HubProcess;
  let alice: Agent;
  const opened: ControlClient[] = [];
  const open = async (key?: string) => {
    const c = await connectControl(hub.socket, 'test-window', key);
    opened.push(c);
    return c;
  };
  let sent = 0;
  /** A fresh handoff from alice to the person (maria), ACK asked (a body of its own: the same one twice is one send). */
  const toMaria = async () =>
    (await alice.ok('send_handoff', { to: 'maria', body: `for the person, #${++sent}`, requires_ack: true }))
      .message_id as string;
  const receiptsOf = async (id: string) => (await alice.ok('get_receipts', { message_id: id })).deliveries[0].receipts;

  before(async () => {
    hub = await startHub({ editor: true, env: { [EDITOR_KEY_ENV]: KEY } });
    await call(hub.editor!, PresenceRequest, { identity: 'maria', focused: true });
    alice = await connectAgent({ socket: hub.socket, name: 'alice' });
  });
  after(async () => {
    for (const c of opened) c.close();
    await alice?.close();
    hub.editor?.dispose();
    await hub?.stop();
  });

  /** Everything only an editor window may do, tried from `c`: each refused, nothing recorded, Matrix as it was. */
  async function triesAndIsRefused(c: ControlClient): Promise<void> {
    assert.equal(c.hub.channel, 'cli');
    const id = await toMaria();
    for (const [kind, outcome] of [['read'], ['ack'], ['result', 'done']] as const) {
      const r = await refusal(call(c.connection, ReceiptRequest, { as: 'maria', id, kind, outcome }));
      assert.equal(r.data?.code, 'not_your_channel', `${kind}: ${r.message}`);
      assert.match(r.message, /comes only from maria's own channel.*holding its editor key.*Nothing was recorded/);
    }
    const resolve = await refusal(call(c.connection, ResolveRequest, { id, by: 'maria' }));
    assert.equal(resolve.data?.code, 'not_your_channel', resolve.message);
    assert.deepEqual(await receiptsOf(id), [], 'no receipt recorded');
    assert.equal((await call(c.connection, MessageRequest, { id }))?.resolution, undefined, 'not resolved');

    const linkBefore = (await call(hub.editor!, SnapshotRequest)).link;
    const connect = await refusal(call(c.connection, MatrixConnectRequest, MATRIX));
    assert.equal(connect.data?.code, 'not_your_channel', connect.message);
    assert.match(connect.message, /Connecting this hub to Matrix is the editor's act.*Nothing changed/);
    const disconnect = await refusal(call(c.connection, MatrixDisconnectRequest));
    assert.equal(disconnect.data?.code, 'not_your_channel', disconnect.message);
    assert.match(disconnect.message, /Disconnecting this hub from Matrix is the editor's act/);
    assert.deepEqual((await call(hub.editor!, SnapshotRequest)).link?.homeserver, linkBefore?.homeserver);
  }

  it('without the key: cli, refused', async () => {
    await triesAndIsRefused(await open());
  });

  it('with a wrong key (same length, or any string): cli, refused, and the hub logs it', async () => {
    await triesAndIsRefused(await open(randomBytes(32).toString('hex')));
    await triesAndIsRefused(await open('not a key'));
    assert.match(hub.log(), /presented a key that is not this hub's editor key: serving it as cli/);
  });

  it("with the key: an editor window; the person's receipts and resolve work and say `editor`; Matrix links and unlinks", async () => {
    const window = await open(KEY);
    assert.equal(window.hub.channel, 'editor');
    const id = await toMaria();
    await call(window.connection, ReceiptRequest, { as: 'maria', id, kind: 'read' });
    await call(window.connection, ReceiptRequest, { as: 'maria', id, kind: 'ack' });
    await call(window.connection, ReceiptRequest, { as: 'maria', id, kind: 'result', outcome: 'done', summary: 'ok' });
    const receipts = await receiptsOf(id);
    assert.deepEqual(
      receipts.map((r: { kind: string; by: string; channel: string }) => [r.kind, r.by, r.channel]),
      [
        ['read', 'maria', 'editor'],
        ['ack', 'maria', 'editor'],
        ['result', 'maria', 'editor'],
      ],
    );
    const other = await toMaria();
    await call(window.connection, ResolveRequest, { id: other, by: 'maria' });
    assert.equal((await call(window.connection, MessageRequest, { id: other }))?.resolution?.by, 'maria');

    const status = await call(window.connection, MatrixConnectRequest, MATRIX);
    assert.equal(status.homeserver, MATRIX.homeserver);
    assert.equal((await call(hub.editor!, SnapshotRequest)).link?.homeserver, MATRIX.homeserver);
    // The socket without the key still cannot unlink it.
    await triesAndIsRefused(await open());
    await call(window.connection, MatrixDisconnectRequest);
    assert.equal((await call(hub.editor!, SnapshotRequest)).link, undefined);
    assert.ok(!hub.log().includes(KEY), 'the key is never logged');
  });
});

describe('a hub started outside any window has no editor key', () => {
  it('a socket window presenting a key from its environment is still cli', async () => {
    const hub = await startHub({ env: { [EDITOR_KEY_ENV]: KEY } });
    const c = await connectControl(hub.socket, 'test-window', KEY);
    try {
      assert.equal(c.hub.channel, 'cli');
      const r = await refusal(call(c.connection, MatrixDisconnectRequest));
      assert.equal(r.data?.code, 'not_your_channel');
    } finally {
      c.close();
      await hub.stop();
    }
  });
});

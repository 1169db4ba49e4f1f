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
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EditorKeys, newEditorKey } from '../../extension/client/editorKey';
import { hubLaunch } from '../../extension/client/hubLaunch';
import { RunningHub } from '../../extension/client/runningHub';
import { connectAgent, type Agent } from '../helpers/agent';
import { NODE, ROOT, startHub, stoppable, tempDir, type HubProcess } from '../helpers/hubProcess';
import { waitFor } from '../helpers/wait';

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

describe("a second window finds the first window's key and is an editor window of its hub", () => {
  it('the hub launched as the first window launches it; the second window reads the key from the shared SecretStorage', async () => {
    const base = tempDir('wkey');
    const location = {
      workspace: join(base, 'ws'),
      folder: join(base, 'ws'),
      store: join(base, 'store'),
      socket: join(base, 'run', 'hub.sock'),
    };
    mkdirSync(location.workspace, { recursive: true });
    const secrets = new Map<string, string>();
    const storage = {
      get: async (k: string) => secrets.get(k),
      store: async (k: string, v: string) => void secrets.set(k, v),
    };
    // The first window: its launch (dist/hub.js beside the extension), then the key kept once the hub runs.
    const key = newEditorKey();
    const { args, env } = hubLaunch(location, ROOT, key, process.env);
    const proc = spawn(NODE, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const hub = stoppable(proc);
    let log = '';
    proc.stderr.on('data', (d: Buffer) => (log += d.toString()));
    let second: RunningHub | undefined;
    let stranger: RunningHub | undefined;
    try {
      await waitFor(
        () => log.includes('listening on'),
        10_000,
        () => `the hub listening:\n${log}`,
      );
      await new EditorKeys(storage).remember(location.socket, key);
      // The second window, and a window of another VS Code (its own, empty SecretStorage).
      second = await RunningHub.connect(location.socket, await new EditorKeys(storage).recall(location.socket));
      stranger = await RunningHub.connect(
        location.socket,
        await new EditorKeys({ get: async () => undefined, store: async () => undefined }).recall(location.socket),
      );
      assert.equal(second.isEditor, true);
      assert.equal(stranger.isEditor, false);
      await call(second.connection, PresenceRequest, { identity: 'maria', focused: true });
      const alice = await connectAgent({ socket: location.socket, name: 'alice' });
      try {
        const id = (await alice.ok('send_handoff', { to: 'maria', body: 'to the person at the second window' }))
          .message_id;
        const refused = await refusal(call(stranger.connection, ReceiptRequest, { as: 'maria', id, kind: 'ack' }));
        assert.equal(refused.data?.code, 'not_your_channel');
        await call(second.connection, ReceiptRequest, { as: 'maria', id, kind: 'ack' });
        const receipts = (await alice.ok('get_receipts', { message_id: id })).deliveries[0].receipts;
        assert.deepEqual(
          receipts.map((r: { kind: string; channel: string }) => [r.kind, r.channel]),
          [['ack', 'editor']],
        );
      } finally {
        await alice.close();
      }
    } finally {
      second?.close();
      stranger?.close();
      await hub.stop();
    }
  });
});

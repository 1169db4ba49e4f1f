// The bridge's routing, line by line, between a client and hubs that come and go. The hubs here
// are sockets the test answers by hand, so it can do what a real hub only does by accident:
// take a call and die before answering, or ask the client something and be replaced.
// (faults/continuity.test.ts runs the same bridge against real hub processes.)
import assert from 'node:assert/strict';
import { createServer, createConnection, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Bridge } from '../../extension/bridge/bridge';
import { RESEND_META } from '../../extension/protocol/mcp';
import { waitFor } from '../helpers/agent';
import { tempDir } from '../helpers/hubProcess';

/** A hub the test drives: what it was sent, and its socket to answer on. */
interface FakeHub {
  server: Server;
  got: any[];
  /** When each connection came (performance.now()). */
  connectedAt: number[];
  socket?: Socket;
  send(m: object): void;
  /** Dies: no more connections, and every one it had is cut. */
  die(): void;
}

const fakes: FakeHub[] = [];
after(() => fakes.forEach((f) => f.die()));

/** `refuse`: it answers every initialize with an error. */
function fakeHub(path: string, refuse = false): Promise<FakeHub> {
  const sockets: Socket[] = [];
  const hub: FakeHub = {
    server: createServer(),
    got: [],
    connectedAt: [],
    send: (m) => hub.socket!.write(`${JSON.stringify(m)}\n`),
    die: () => {
      hub.server.close();
      for (const s of sockets) s.destroy();
    },
  };
  fakes.push(hub);
  hub.server.on('connection', (s) => {
    hub.connectedAt.push(performance.now());
    sockets.push(s);
    hub.socket = s;
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const m = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        hub.got.push(m);
        if (m.method === 'initialize')
          hub.send({
            jsonrpc: '2.0',
            id: m.id,
            ...(refuse
              ? { error: { code: -32600, message: 'not today' } }
              : {
                  result: {
                    protocolVersion: '2025-06-18',
                    capabilities: {},
                    serverInfo: { name: 'fake', version: '1' },
                  },
                }),
          });
      }
    });
  });
  return new Promise((r) => hub.server.listen(path, () => r(hub)));
}

/** A bridge whose hub is whatever listens on `path`; what it writes to its client, parsed, in `out`. */
function bridgeOn(path: string, out: any[], logs: string[], gapMs: number): Bridge {
  return new Bridge({
    connect: () =>
      new Promise((resolve, reject) => {
        const socket = createConnection(path);
        socket.once('error', reject);
        socket.once('connect', () => resolve({ socket, rest: Buffer.alloc(0), path }));
      }),
    write: (line) => out.push(JSON.parse(line)),
    log: (l) => logs.push(l),
    noHub: (ever) => (ever ? 'went away' : 'not yet'),
    gapMs,
    retryMs: 20,
  });
}

describe('the bridge between a client and hubs that come and go', () => {
  const dir = tempDir('bridge-unit');
  const path = join(dir, 'hub.sock');
  const out: any[] = [];
  const bridge = bridgeOn(path, out, [], 2000);
  const client = (m: object) => bridge.fromClient(Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`));
  const answerTo = (id: number) => out.filter((m) => m.id === id && !m.method);
  after(() => bridge.close());

  it('answers initialize and the lists itself while no hub is there; a call waits for one', async () => {
    bridge.start();
    client({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    client({ method: 'notifications/initialized' });
    client({ id: 2, method: 'tools/list', params: {} });
    client({ id: 3, method: 'resources/list', params: {} });
    client({ id: 4, method: 'prompts/list', params: {} });
    // Answered once the first try finds no hub (it would have waited for one that was there).
    await waitFor(() => answerTo(1).length === 1, 5000, 'the initialize answer');
    assert.equal(answerTo(1)[0].result.serverInfo.name, 'handoff');
    assert.ok(answerTo(2)[0].result.tools.some((t: { name: string }) => t.name === 'send_handoff'));
    assert.equal(answerTo(3)[0].result.resources[0].uri, 'handoff://inbox');
    assert.equal(answerTo(4)[0].error.code, -32601, 'what a hub does not serve, answered as a hub would');
    client({ id: 5, method: 'tools/call', params: { name: 'inbox', arguments: {} } });
    const first = await fakeHub(path);
    await waitFor(() => first.got.some((m) => m.id === 5), 5000, 'the waiting call to reach the hub');
    const init = first.got.find((m) => m.method === 'initialize');
    assert.equal(init.params.clientInfo.name, 'c', "the handshake made with the client's own initialize");
    assert.ok(
      first.got.findIndex((m) => m.method === 'notifications/initialized') < first.got.findIndex((m) => m.id === 5),
    );
    first.send({ jsonrpc: '2.0', id: 5, result: { content: [] } });
    await waitFor(() => answerTo(5).length === 1, 5000, 'the answer');
    first.die();
  });
});

describe('the bridge across a hub that dies mid-call', () => {
  const dir = tempDir('bridge-unit2');
  const path = join(dir, 'hub.sock');
  const out: any[] = [];
  const logs: string[] = [];
  const bridge = bridgeOn(path, out, logs, 3000);
  const client = (m: object) => bridge.fromClient(Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`));
  const answerTo = (id: number) => out.filter((m) => m.id === id && !m.method);
  after(() => bridge.close());

  it('resends what the lost hub never answered (a send with the same resend key), drops a stale heartbeat answer, says when the tools changed', async () => {
    const first = await fakeHub(path);
    bridge.start();
    client({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    client({ method: 'notifications/initialized' });
    client({ id: 2, method: 'tools/list', params: {} });
    client({ id: 3, method: 'tools/call', params: { name: 'send_handoff', arguments: { to: 'bob', body: 'hi' } } });
    client({ id: 4, method: 'tools/call', params: { name: 'inbox', arguments: {} } });
    await waitFor(() => first.got.some((m) => m.id === 4), 5000, 'both calls at the first hub');
    const key = first.got.find((m) => m.id === 3).params._meta[RESEND_META];
    assert.match(key, /^[0-9a-f-]{36}:\d+$/, 'a key of this process');
    first.send({ jsonrpc: '2.0', id: 'hb-1', method: 'ping' }); // the hub's heartbeat, to the client
    await waitFor(() => out.some((m) => m.id === 'hb-1'), 5000, 'the heartbeat at the client');
    first.die(); // with both calls unanswered
    await waitFor(() => logs.some((l) => /went away/.test(l)), 5000, 'the bridge to notice');
    const second = await fakeHub(path);
    await waitFor(() => second.got.some((m) => m.id === 4), 5000, 'the calls sent again to the next hub');
    client({ id: 'hb-1', result: {} }); // the client answers the dead hub's heartbeat late
    const resent = second.got.find((m) => m.id === 3);
    assert.equal(resent.params._meta[RESEND_META], key, 'the same resend key: the hub lands it once');
    const own = second.got.find((m) => m.method === 'tools/list');
    second.send({
      jsonrpc: '2.0',
      id: own.id,
      result: { tools: [{ name: 'only_this', inputSchema: { type: 'object' } }] },
    });
    second.send({ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'stored' }] } });
    second.send({ jsonrpc: '2.0', id: 4, result: { content: [] } });
    second.send({ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'a second answer' }] } });
    client({ id: 6, method: 'tools/call', params: { name: 'inbox', arguments: {} } });
    await waitFor(() => second.got.some((m) => m.id === 6), 5000, 'a last call');
    second.send({ jsonrpc: '2.0', id: 6, result: { content: [] } }); // after the second answer: once it is here, so is that
    await waitFor(
      () => answerTo(6).length === 1 && out.some((m) => m.method === 'notifications/tools/list_changed'),
      5000,
      'answers and list_changed',
    );
    assert.equal(answerTo(3).length, 1, 'answered once');
    assert.equal(answerTo(3)[0].result.content[0].text, 'stored');
    assert.equal(
      second.got.filter((m) => m.id === 'hb-1').length,
      0,
      "the dead hub's heartbeat answer never reaches the new hub",
    );
    second.die();
  });
});

describe('a hub that refuses the handshake', () => {
  it('is asked again less and less often, and the log says why', async () => {
    const path = join(tempDir('bridge-refused'), 'hub.sock');
    const hub = await fakeHub(path, true);
    const { connectedAt } = hub;

    const logs: string[] = [];
    const bridge = bridgeOn(path, [], logs, 2000);
    try {
      bridge.start();
      bridge.fromClient(
        Buffer.from(
          `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
        ),
      );
      await waitFor(() => connectedAt.length >= 5, 10_000, 'five tries');
      const gaps = connectedAt.slice(1).map((at, i) => at - connectedAt[i]);
      // retryMs is 20: each refusal doubles the wait (timers never fire early, so these are floors).
      gaps.forEach((gap, i) => assert.ok(gap >= 20 * 2 ** (i + 1) - 2, `gaps ${gaps.map(Math.round).join(', ')} ms`));
      assert.ok(
        logs.some((l) => /refused the MCP handshake: .*not today.*; trying again in 40 ms/.test(l)),
        logs.join('\n'),
      );
    } finally {
      bridge.close();
      hub.die();
    }
  });
});

// The hub as a process: one per workspace, stale sockets, private permissions, a bridge with no
// hub, replayed JSON-RPC requests, half-open connections, and the CLI.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { connectAgent, plainBody } from '../helpers/agent';
import { DIST, NODE, spawnHub, startHub, tempDir } from '../helpers/hubProcess';
import { rawAgent } from '../helpers/rawAgent';
import { waitUntil } from '../helpers/wait';
import { hubSocketPath } from '../../extension/shared/paths';

const run = promisify(execFile);

describe('hub process', () => {
  it('keeps its socket private: 0700 directory, 0600 socket', async () => {
    const hub = await startHub();
    try {
      assert.equal(statSync(dirname(hub.socket)).mode & 0o777, 0o700);
      assert.equal(statSync(hub.socket).mode & 0o777, 0o600);
    } finally {
      await hub.stop();
    }
    assert.equal(existsSync(hub.socket), false, 'a stopped hub removes its socket');
  });

  it('refuses a second hub for the same workspace, naming the running one', async () => {
    const hub = await startHub();
    try {
      const second = spawnHub({ workspace: hub.workspace, store: hub.store, socket: hub.socket });
      second.ready.catch(() => undefined);
      const code = await new Promise<number | null>((r) => second.proc.on('exit', r));
      assert.equal(code, 3);
      assert.match(second.output(), new RegExp(`already running for .*\\(pid ${hub.proc.pid}`));
      assert.doesNotMatch(second.output(), /store .*open/, 'the second hub never opened the store');
      // The first one is unharmed.
      const a = await connectAgent({ socket: hub.socket, name: 'still' });
      assert.equal((await a.ok('whoami')).identity, 'still');
      await a.close();
    } finally {
      await hub.stop();
    }
  });

  it('three hubs started at once for one workspace: exactly one runs', async () => {
    const base = tempDir('race');
    const spec = { workspace: join(base, 'ws'), store: join(base, 'store'), socket: join(base, 'run', 'hub.sock') };
    mkdirSync(spec.workspace, { recursive: true });
    const hubs = [0, 1, 2].map(() => spawnHub(spec));
    const outcomes = await Promise.all(
      hubs.map((h) =>
        h.ready.then(
          () => 'running',
          () => `exit ${h.proc.exitCode}`,
        ),
      ),
    );
    try {
      assert.deepEqual([...outcomes].sort(), ['exit 3', 'exit 3', 'running'], hubs.map((h) => h.output()).join('\n'));
    } finally {
      for (const h of hubs) h.proc.kill('SIGTERM');
    }
  });

  it('replaces a stale socket left by a hub killed with -9', async () => {
    const hub = await startHub();
    await hub.kill9();
    assert.ok(existsSync(hub.socket), 'kill -9 leaves the socket file behind');
    const next = await hub.restart();
    try {
      const a = await connectAgent({ socket: next.socket, name: 'after' });
      assert.equal((await a.ok('whoami')).identity, 'after');
      await a.close();
      assert.match(next.log(), /removing stale socket/);
    } finally {
      await next.stop();
    }
  });

  it('the bridge with no hub says so on stderr and to the model: the handshake completes, the real tools are listed, a call is a retryable error naming the fix', async () => {
    const dir = tempDir('nohub');
    const socket = join(dir, 'missing.sock');
    const transport = new StdioClientTransport({
      command: NODE,
      args: [join(DIST, 'bridge.js'), '--name', 'x', '--workspace', dir],
      env: { ...process.env, HANDOFF_HUB: socket, HANDOFF_BRIDGE_GAP_MS: '300' } as Record<string, string>,
      stderr: 'pipe',
    });
    let err = '';
    transport.stderr?.on('data', (d) => (err += d));
    const client = new Client({ name: 'nohub-probe', version: '1' });
    await client.connect(transport);
    try {
      assert.match(client.getInstructions() ?? '', /Handoff is a message bus/);
      const { tools } = await client.listTools();
      assert.ok(
        tools.some((t) => t.name === 'send_handoff') && tools.some((t) => t.name === 'ack'),
        'the real tools, never an empty list',
      );
      const r = await client.callTool({ name: 'inbox', arguments: {} });
      assert.equal(r.isError, true);
      assert.match(JSON.stringify(r.content), /No Handoff hub for the workspace .*dist\/cli\.js\\?" hub --workspace/);
      assert.match(JSON.stringify(r.content), /no restart of this agent is needed/);
      assert.match(err, /no hub for the workspace yet .*missing\.sock.*waiting for one/);
    } finally {
      await client.close();
    }
  });

  it('the bridge finds the hub of its workspace from its cwd when HANDOFF_HUB is unset', async () => {
    const ws = tempDir('cwd-ws');
    mkdirSync(join(ws, '.git'));
    mkdirSync(join(ws, 'src', 'deep'), { recursive: true });
    // No --socket: the hub derives it from the workspace, as the bridge will.
    const hub = await startHub({ workspace: ws, socket: null });
    try {
      assert.equal(hub.socket, hubSocketPath(ws));
      const a = await connectAgent({ socket: '', name: 'nested', cwd: join(ws, 'src', 'deep') });
      assert.equal((await a.ok('whoami')).workspace, ws);
      await a.close();
    } finally {
      await hub.stop();
    }
  });

  it('answers a replayed JSON-RPC tools/call on the same connection from the first result', async () => {
    const hub = await startHub();
    try {
      const bob = await connectAgent({ socket: hub.socket, name: 'bob' });
      const raw = await rawAgent(hub.socket, { identity: 'alice', session: 'alice-raw' });
      await raw.initialize();
      const call = { name: 'send_handoff', arguments: { to: 'bob', body: 'replay me', idempotency_key: undefined } };
      raw.request(7, 'tools/call', call);
      raw.request(7, 'tools/call', call);
      const first = await raw.response(7, 1);
      const second = await raw.response(7, 2);
      assert.equal(first.result.structuredContent.duplicate, undefined);
      // The first answer itself, not a second run that the probable-duplicate rule happened to catch.
      assert.deepEqual(second.result, first.result);
      raw.close();
      const inbox = await bob.ok('inbox');
      assert.equal(inbox.messages.filter((m: any) => plainBody(m) === 'replay me').length, 1, 'one message created');
      await bob.close();
    } finally {
      await hub.stop();
    }
  });

  it('drops a half-open connection that stops answering heartbeats, so it no longer counts as live', async () => {
    const hub = await startHub({ env: { HANDOFF_HEARTBEAT_MS: '200' } });
    try {
      const watcher = await connectAgent({ socket: hub.socket, name: 'watcher' });
      const zombie = await rawAgent(hub.socket, { identity: 'zombie', session: 'z' }, { answerPings: false });
      await zombie.initialize();
      const live = async () =>
        (await watcher.ok('list_peers')).peers.find((p: any) => p.identity === 'zombie')?.live_sessions;
      await waitUntil(async () => (await live()) === 1, 5000, 'live once initialised');
      await waitUntil(async () => (await live()) === 0, 5000, 'an unanswered heartbeat removes the session');
      zombie.close();
      await watcher.close();
    } finally {
      await hub.stop();
    }
  });

  it('an unnamed session registers through whoami; without a name every tool says how to get one', async () => {
    const hub = await startHub();
    try {
      const anon = await connectAgent({ socket: hub.socket });
      const refused = await anon.call('send_handoff', { to: 'x', body: 'y' });
      assert.equal(refused.structuredContent.error.code, 'no_identity');
      assert.match((refused.content[0] as any).text, /whoami with \{"name"/);
      const misnamed = await connectAgent({ socket: hub.socket, env: { HANDOFF_AGENT: 'not a name!' } });
      const why = await misnamed.call('send_handoff', { to: 'x', body: 'y' });
      assert.equal(why.structuredContent.error.code, 'no_identity');
      assert.match(
        (why.content[0] as any).text,
        /"not a name!" is not a valid identity name/,
        'a bad name is named, not ignored',
      );
      await misnamed.close();
      const me = await anon.ok('whoami', { name: 'late-namer', roles: ['reviewer'] });
      assert.equal(me.identity, 'late-namer');
      const peer = await connectAgent({ socket: hub.socket, name: 'lead' });
      const sent = await peer.ok('send_handoff', { to: 'role:reviewer', body: 'review by role' });
      assert.deepEqual(
        sent.recipients.map((r: any) => r.identity),
        ['late-namer'],
      );
      await anon.waitForPushes(1);
      await anon.close();
      await peer.close();
    } finally {
      await hub.stop();
    }
  });

  it('the CLI sends, lists peers and inboxes, and `status` exits 1 once a send is past its SLA', async () => {
    const hub = await startHub();
    const cli = (...args: string[]) =>
      run(NODE, [join(DIST, 'cli.js'), ...args, '--hub', hub.socket]).then(
        (r) => ({ code: 0, ...r }),
        (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
      );
    try {
      const dev = await connectAgent({ socket: hub.socket, name: 'dev' });
      const status = await cli('status');
      assert.equal(status.code, 0, status.stdout);
      const sent = await cli('send', '--as', 'human', '--to', 'dev', '--json', 'please fix the build');
      const result = JSON.parse(sent.stdout);
      assert.equal(result.state, 'pushed');
      await dev.waitForPushes(1);
      const text = await cli('send', '--as', 'human', '--to', 'dve', 'typo');
      assert.equal(text.code, 1);
      assert.match(text.stderr, /Did you mean "dev"/);
      const peers = await cli('peers');
      assert.match(peers.stdout, /dev\s+1 live/);
      const inbox = JSON.parse((await cli('inbox', '--as', 'dev', '--json')).stdout);
      assert.equal(inbox[0].message.body, 'please fix the build');

      await dev.close();
    } finally {
      await hub.stop();
    }
    const slaHub = await startHub({ env: { HANDOFF_TICK_MS: '100' }, args: ['--sla-seconds', '1'] });
    const cli2 = (...args: string[]) =>
      run(NODE, [join(DIST, 'cli.js'), ...args, '--hub', slaHub.socket]).then(
        (r) => ({ code: 0, ...r }),
        (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
      );
    try {
      const dev = await connectAgent({ socket: slaHub.socket, name: 'dev' });
      const sent = JSON.parse(
        (await cli2('send', '--as', 'human', '--to', 'dev', '--json', 'ack me within a second')).stdout,
      );
      assert.equal((await cli2('status')).code, 0);
      await dev.waitForPushes(2, 15_000); // the one chase: the hub's timer has seen it past its SLA
      assert.equal(dev.pushes[1].meta.chase, 'true');
      const late = await cli2('status');
      assert.equal(late.code, 1);
      assert.match(late.stdout, new RegExp(`OVERDUE ${sent.message_id} human → dev:pushed`));
      await dev.ok('ack', { message_id: sent.message_id });
      assert.equal((await cli2('status')).code, 0, 'the ACK clears it');
      await dev.close();
    } finally {
      await slaHub.stop();
    }
  });

  it('replay on attach is bounded and says how many more wait', async () => {
    const hub = await startHub({ args: ['--replay-limit', '5'] });
    try {
      const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
      const bob0 = await connectAgent({ socket: hub.socket, name: 'bob' });
      await bob0.close();
      for (let i = 0; i < 8; i++) await alice.ok('send_handoff', { to: 'bob', body: `queued ${i}` });
      const bob = await connectAgent({ socket: hub.socket, name: 'bob' });
      await bob.waitForPushes(6);
      // A seventh replayed push would come before the push of a message sent now.
      const marker = await alice.ok('send_handoff', { to: 'bob', body: 'after the replay' });
      await bob.waitForPushes(7);
      assert.equal(bob.pushes.length, 7);
      assert.equal(bob.pushes[6].meta.message_id, marker.message_id, 'the replay stopped at five and its notice');
      assert.deepEqual(
        bob.pushes.slice(0, 5).map((p) => p.content.match(/queued \d/)![0]),
        ['queued 0', 'queued 1', 'queued 2', 'queued 3', 'queued 4'],
      );
      assert.match(bob.pushes[5].content, /Replay truncated: 3 more unacked handoffs/);
      assert.equal((await bob.ok('inbox')).messages.length, 9, 'the rest are in the inbox (and the later one)');
      await Promise.all([alice.close(), bob.close()]);
    } finally {
      await hub.stop();
    }
  });

  it('G7: mail nobody ACKs is dead-lettered visibly after its TTL, never dropped silently', async () => {
    const hub = await startHub({ env: { HANDOFF_TICK_MS: '100' } });
    try {
      const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
      const ghost = await connectAgent({ socket: hub.socket, name: 'ghost' });
      await ghost.close();
      const sent = await alice.ok('send_handoff', { to: 'ghost', body: 'anyone there?', ttl_seconds: 1 });
      const entry = await waitUntil(
        async () => {
          const e = (await alice.ok('pending')).pending.find((x: any) => x.id === sent.message_id);
          return e?.deadLettered && e;
        },
        15_000,
        'the dead letter, past its TTL',
      );
      assert.equal(entry.deadLettered, true);
      assert.equal(entry.recipients[0].state, 'failed');
      assert.match(entry.recipients[0].failure, /dead-lettered: no ACK within the TTL of 1 s/);
      const status = await run(NODE, [join(DIST, 'cli.js'), 'status', '--hub', hub.socket]).catch((e) => e);
      assert.equal(status.code, 1, 'status flags the dead letter');
      await alice.close();
    } finally {
      await hub.stop();
    }
  });

  it('a non-hub listening on the socket path is reported, not trusted', async () => {
    const dir = tempDir('imposter');
    const path = join(dir, 'hub.sock');
    const server = createServer((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await new Promise<void>((r) => server.listen(path, r));
    writeFileSync(join(dir, 'note'), '');
    try {
      const r = await run(NODE, [join(DIST, 'cli.js'), 'status', '--hub', path]).catch((e) => e);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /not a Handoff hub/);
    } finally {
      server.close();
    }
  });
});

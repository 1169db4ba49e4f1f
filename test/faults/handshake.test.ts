// Sessions are honest about being alive: a connection that says hello and `initialize` but never
// `initialized` is not a live session — not listed, not counted, not pushed to — and is closed
// after the handshake deadline. And the editor's hub answers LSP `shutdown` before it exits on
// `exit`, so Restart Hub and Reload Window never wait out the language client's timeout.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { connectAgent, waitFor } from '../helpers/agent';
import { DIST, NODE, startHub, tempDir } from '../helpers/hubProcess';
import { rawAgent } from '../helpers/rawAgent';

describe('the MCP handshake decides who is live', () => {
  it('no `initialized`: never live, never pushed to, closed at the deadline', { timeout: 20_000 }, async () => {
    const hub = await startHub({ env: { HANDOFF_HANDSHAKE_MS: '1500' } });
    const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    try {
      await (await connectAgent({ socket: hub.socket, name: 'ivy' })).close(); // ivy is a known name
      const half = await rawAgent(hub.socket, { identity: 'ivy', session: 'ivy-half' });
      half.request(0, 'initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'half', version: '1' },
      });
      await half.response(0);
      const closed = new Promise<number>((r) => half.socket.once('close', () => r(Date.now())));
      const openedAt = Date.now();
      const peers = (await alice.ok('list_peers')).peers as { identity: string; live_sessions: number }[];
      assert.equal(peers.find((p) => p.identity === 'ivy')?.live_sessions, 0, 'not counted as live');
      const sent = await alice.ok('send_handoff', { to: 'ivy', body: 'to a half-open connection' });
      assert.equal(sent.recipients[0].state, 'queued', `not pushed to it: ${JSON.stringify(sent.recipients[0])}`);
      assert.equal(half.messages.filter((m) => m.method === 'notifications/claude/channel').length, 0);
      const at = await closed;
      console.log(`# a connection without initialized was closed ${at - openedAt} ms after its initialize`);
      const receipts = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
      assert.deepEqual(receipts.pushes, [], 'no push was recorded to it');
    } finally {
      await alice.close();
      await hub.stop();
    }
  });
});

describe("the editor's hub and LSP shutdown", () => {
  it('answers `shutdown`, then exits 0 on `exit`', { timeout: 30_000 }, async () => {
    const base = tempDir('lsp');
    mkdirSync(join(base, 'ws'));
    const proc = spawn(
      NODE,
      [
        join(DIST, 'hub.js'),
        '--stdio',
        '--workspace',
        join(base, 'ws'),
        '--store',
        join(base, 'store'),
        '--socket',
        join(base, 'hub.sock'),
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let err = '';
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    const connection = createMessageConnection(
      new StreamMessageReader(proc.stdout),
      new StreamMessageWriter(proc.stdin),
    );
    connection.listen();
    try {
      await connection.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
      await waitFor(() => err.includes('listening on'), 10_000, 'the hub to listen');
      const asked = Date.now();
      const answered = await Promise.race([
        connection.sendRequest('shutdown').then(() => 'answered'),
        exited.then(() => 'exited without answering'),
      ]);
      assert.equal(answered, 'answered');
      console.log(`# shutdown answered in ${Date.now() - asked} ms`);
      assert.equal(proc.exitCode, null, 'still running after shutdown, until exit');
      await connection.sendNotification('exit');
      assert.equal(await exited, 0);
    } finally {
      connection.dispose();
      proc.kill('SIGKILL');
    }
  });
});

// The hub as the server end of the editor's languageclient connection: it answers the control
// protocol over node IPC, and it dies with the process that started it — socket included.
import assert from 'node:assert/strict';
import { fork, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createMessageConnection, IPCMessageReader, IPCMessageWriter } from 'vscode-jsonrpc/node';
import { SnapshotRequest } from '../../extension/protocol/control';
import type { Snapshot } from '../../extension/protocol/views';
import { waitFor } from '../helpers/agent';
import { DIST, NODE, tempDir } from '../helpers/hubProcess';

describe('hub under an editor (node IPC, like vscode-languageclient)', () => {
  it('serves initialize and handoff/snapshot over IPC', async () => {
    const base = tempDir('ipc');
    const socket = join(base, 'run', 'hub.sock');
    mkdirSync(join(base, 'ws'));
    const hub = fork(
      join(DIST, 'hub.js'),
      [
        '--workspace',
        join(base, 'ws'),
        '--store',
        join(base, 'store'),
        '--socket',
        socket,
        '--node-ipc',
        `--clientProcessId=${process.pid}`,
      ],
      { execPath: NODE, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] },
    );
    const connection = createMessageConnection(new IPCMessageReader(hub), new IPCMessageWriter(hub));
    connection.listen();
    try {
      const init = (await connection.sendRequest('initialize', {
        processId: process.pid,
        rootUri: null,
        capabilities: {},
      })) as { serverInfo: { name: string } };
      assert.equal(init.serverInfo.name, 'handoff-hub');
      await connection.sendNotification('initialized', {});
      const snap = (await connection.sendRequest(SnapshotRequest.method)) as Snapshot;
      assert.equal(snap.workspace, join(base, 'ws'));
      assert.equal(snap.store.ok, true);
      await waitFor(() => existsSync(socket), 5000, 'the socket');
    } finally {
      connection.dispose();
      hub.kill('SIGKILL');
    }
  });

  it('exits, removing its socket, when the editor process that started it is killed -9', async () => {
    const base = tempDir('orphan');
    const socket = join(base, 'run', 'hub.sock');
    mkdirSync(join(base, 'ws'));
    // A stand-in for the extension host: starts the hub over IPC, reports its pid, then waits.
    const parentScript = join(base, 'parent.js');
    writeFileSync(
      parentScript,
      `
      const { fork } = require('node:child_process');
      const hub = fork(${JSON.stringify(join(DIST, 'hub.js'))}, ['--workspace', ${JSON.stringify(join(base, 'ws'))}, '--store', ${JSON.stringify(join(base, 'store'))}, '--socket', ${JSON.stringify(socket)}, '--node-ipc', '--clientProcessId=' + process.pid], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
      console.log(hub.pid);
      setInterval(() => {}, 1000);
    `,
    );
    const parent = spawn(NODE, [parentScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    const hubPid = await new Promise<number>((r) => parent.stdout.once('data', (d) => r(Number(String(d).trim()))));
    await waitFor(() => existsSync(socket), 10_000, 'the hub socket');
    parent.kill('SIGKILL');
    const alive = () => {
      try {
        process.kill(hubPid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => !alive(), 10_000, 'the orphaned hub to exit');
    assert.equal(existsSync(socket), false, 'no socket left behind');
  });
});

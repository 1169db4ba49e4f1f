// A hub whose socket file modes do not make private (a Windows named pipe: any user may open it
// for reading) requires its secret in every hello (shared/hubSecret.ts). Run here with socket modes
// switched off through the seam (HANDOFF_POWERS_OFF=socketmodes): a client that cannot read the
// secret is refused, saying why, and the hub serves on; Handoff's own bridge, hook and CLI prove it
// and are served; a client never talks to a "hub" that cannot prove the secret back.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { greet, NotYourHub } from '../../extension/shared/greet';
import { connectAgent, type Agent } from '../helpers/agent';
import { runHook } from '../helpers/hook';
import { DIST, NODE, spawnHub, startHub, tempDir, type HubProcess } from '../helpers/hubProcess';
import { waitUntil } from '../helpers/wait';

/** One raw hello and the hub's one-line answer; the connection then closes or is closed. */
function rawHello(socket: string, hello: object): Promise<{ reply: { ok: boolean; error?: string } }> {
  return new Promise((resolve, reject) => {
    const c = createConnection(socket);
    let buf = '';
    c.on('connect', () => c.write(`${JSON.stringify({ handoff: 1, ...hello })}\n`));
    c.on('data', (d) => (buf += d.toString()));
    c.on('error', reject);
    // A refused one is closed by the hub; a served one is closed here, after its reply.
    const timer = setTimeout(() => c.destroy(), 1000);
    c.on('close', () => {
      clearTimeout(timer);
      resolve({ reply: JSON.parse(buf.slice(0, buf.indexOf('\n'))) });
    });
  });
}

const hook = {
  kind: 'hook',
  cli: 'claude',
  phase: 'tool',
  event: 'PostToolUse',
  identity: 'bob',
  session: 's',
  ancestors: [1],
};

describe('a hub whose socket file modes do not protect requires its secret', () => {
  let hub: HubProcess;
  let alice: Agent;
  let bob: Agent;
  before(async () => {
    hub = await startHub({ env: { HANDOFF_POWERS_OFF: 'socketmodes' } });
    alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    bob = await connectAgent({ socket: hub.socket, name: 'bob' });
  });
  after(async () => {
    await alice?.close();
    await bob?.close();
    await hub?.stop();
  });

  it('writes a random secret only its user can read, and takes it away when it stops', () => {
    const file = `${hub.socket}.secret`;
    assert.match(readFileSync(file, 'utf8'), /^[0-9a-f]{64}\n$/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it('a client without it is refused, saying why, whatever it says it is; the hub serves on', async () => {
    for (const hello of [{ kind: 'control', client: 'another user' }, { kind: 'mcp', identity: 'bob' }, hook]) {
      const { reply } = await rawHello(hub.socket, hello);
      assert.equal(reply.ok, false, JSON.stringify(hello));
      assert.match(reply.error!, /this hub serves only its own user: a client proves it can read .*hub\.sock\.secret/);
    }
    const forged = await rawHello(hub.socket, { kind: 'control', nonce: 'n', proof: 'f'.repeat(64) });
    assert.equal(forged.reply.ok, false, 'a wrong proof');
    assert.match(hub.log(), /refused a hook connection that does not know this hub's secret/);
    assert.equal(hub.proc.exitCode, null, 'still running');
  });

  it("Handoff's own bridge, hook and CLI prove it and are served", async () => {
    const id = (await alice.ok('send_handoff', { to: 'bob', body: 'through the private hub' })).message_id;
    assert.ok(JSON.stringify(await bob.ok('inbox', {})).includes(id), 'the bridges are served');
    await alice.ok('send_handoff', { to: 'bob', body: 'for the hook' });
    const ran = await runHook(['claude', 'PostToolUse', '--name', 'bob', '--hub', hub.socket], {
      session_id: 'bob-cli',
      hook_event_name: 'PostToolUse',
      cwd: hub.workspace,
    });
    assert.match(ran.stdout, /for the hook/, ran.stderr);
    const status = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(NODE, [join(DIST, 'cli.js'), 'status', '--hub', hub.socket], (e, out, err) =>
        resolve({ code: e ? 1 : 0, out: out + err }),
      ),
    );
    assert.equal(status.code, 0, status.out);
    assert.match(status.out, /2 live session\(s\)/);
  });

  it('takes its secret away when it stops', async () => {
    await hub.stop();
    assert.ok(!existsSync(`${hub.socket}.secret`));
  });
});

describe('a client checks the hub proves the secret back', () => {
  it('a process answering on the socket without the proof (another user’s pipe made first) is not talked to', async () => {
    const dir = tempDir('squat');
    const socket = join(dir, 'hub.sock');
    writeFileSync(`${socket}.secret`, `${'a'.repeat(64)}\n`, { mode: 0o600 });
    let heard = '';
    const squatter = createServer((c) => {
      c.on('data', (d) => {
        heard += d.toString();
        // A hub's reply, and for a hook an answer that would go into the model.
        c.write(`${JSON.stringify({ handoff: 1, ok: true, node: 'squatter' })}\n`);
        const items = [{ id: 'x', from: 'eve', text: 'words from another user', replayed: false }];
        c.write(`${JSON.stringify({ items, more: 0, session: 's' })}\n`);
      });
    }).listen(socket);
    try {
      await assert.rejects(
        greet(socket, { handoff: 1, kind: 'control', client: 'cli' }),
        (e) => e instanceof NotYourHub && /does not know this user's hub secret .*: not your hub/.test(e.message),
      );
      assert.ok(!heard.includes('a'.repeat(64)), 'the secret itself never goes on the wire');
      const ran = await runHook(['claude', 'PostToolUse', '--name', 'bob', '--hub', socket], {
        session_id: 's',
        hook_event_name: 'PostToolUse',
        cwd: dir,
      });
      assert.equal(ran.code, 0);
      assert.ok(!ran.stdout.includes('another user'), `the hook says nothing into the model: ${ran.stdout}`);
    } finally {
      squatter.close();
    }
  });

  it('where file modes protect the socket (Linux), no secret is kept, and one left behind is removed', async () => {
    const base = tempDir('nosecret');
    const socket = join(base, 'run', 'hub.sock');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(base, 'run'), { recursive: true, mode: 0o700 });
    writeFileSync(`${socket}.secret`, `${'b'.repeat(64)}\n`, { mode: 0o600 });
    const plain = await startHub({ socket });
    try {
      await waitUntil(() => !existsSync(`${socket}.secret`), 5000, 'the stale secret removed');
      const { reply } = await rawHello(socket, { kind: 'control', client: 'probe' });
      assert.equal(reply.ok, true, 'a hello with no proof is served');
    } finally {
      await plain.stop();
    }
  });
});

describe('a squatter that holds the pipe before the real hub starts (no secret file, the state that attack leaves)', () => {
  const env = { HANDOFF_POWERS_OFF: 'socketmodes' };
  const run = (args: string[]) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      // Bounded: a CLI that talks to the squatter waits for an answer that never comes.
      execFile(
        NODE,
        [join(DIST, 'cli.js'), ...args],
        { env: { ...process.env, ...env }, timeout: 20_000 },
        (e, out, err) => resolve({ code: e ? 1 : 0, out: out + err }),
      ),
    );

  it('hears no hello, send or session key from the CLI, a bridge or a hook; the real hub then serves them', async () => {
    const base = tempDir('squat-first');
    mkdirSync(join(base, 'run'), { mode: 0o700 });
    const socket = join(base, 'run', 'hub.sock');
    let heard = '';
    let connections = 0;
    // Answers every line as a hub would, and a hook as if it had mail.
    const squatter = createServer((c) => {
      connections++;
      c.on('data', (d) => {
        heard += d.toString();
        c.write(`${JSON.stringify({ handoff: 1, ok: true, node: 'squatter', channel: 'cli' })}\n`);
      });
    }).listen(socket);
    await new Promise((r) => squatter.once('listening', r));
    const key = 'session-key-the-squatter-wants';
    const bridge = await connectAgent({ socket, name: 'alice', session: key, live: false, env });
    try {
      assert.ok(!existsSync(`${socket}.secret`), 'no hub ever wrote its secret');
      const sent = await run(['send', '--hub', socket, '--as', 'maria', '--to', 'bob', 'the launch code is 0000']);
      assert.notEqual(sent.code, 0, sent.out);
      assert.match(sent.out, /tried .*run\/hub\.sock.*no hub of this user's at .*: its secret .* is not there/);
      const r = await bridge.call('whoami', {});
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.match(JSON.stringify(r.content), /No Handoff hub for the workspace/);
      const ran = await runHook(
        ['claude', 'PostToolUse', '--name', 'bob', '--hub', socket],
        {
          session_id: 's',
          hook_event_name: 'PostToolUse',
          cwd: base,
        },
        env,
      );
      assert.equal(ran.code, 0);
      assert.equal(ran.stdout, '', 'the hook says nothing into the model');
      assert.equal(heard, '', 'not one line said to the squatter');
      assert.equal(connections, 0, 'not even a connection');
      // The real hub, started after the squatter: here (a socket file) it takes the path over; on
      // Windows it cannot bind a pipe another user holds, and says so. Either way nobody talks to the squatter.
      mkdirSync(join(base, 'ws'));
      const hub = spawnHub({ workspace: join(base, 'ws'), store: join(base, 'store'), socket, env });
      await hub.ready;
      try {
        const served = await waitUntil(
          async () => {
            const w = await bridge.call('whoami', {});
            return !w.isError && w;
          },
          30_000,
          'the bridge served by the real hub',
        );
        assert.equal(served.structuredContent.identity, 'alice');
        const again = await run(['send', '--hub', socket, '--as', 'maria', '--to', 'alice', 'now to the real hub']);
        assert.equal(again.code, 0, again.out);
        assert.equal(heard, '', 'the squatter heard nothing, before or after');
      } finally {
        hub.proc.kill('SIGTERM');
        await new Promise((r) => hub.proc.once('exit', r));
      }
    } finally {
      await bridge.close();
      squatter.close();
    }
  });
});

// Never cut off: one agent session (the SDK client over one real bridge process) keeps the bus
// through a hub killed with -9 and started again, a hub that starts after the agent, a graceful
// restart, and a hub whose XDG_RUNTIME_DIR the agent's environment does not share. After each,
// a handoff reaches the same session and it ACKs it; counted: pushes per message (once, or
// flagged), lost (0), and how long from the new hub listening to the agent being live again.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connectAgent, waitFor, type Agent } from '../helpers/agent';
import { RESEND_META } from '../../extension/protocol/mcp';
import { spawnHub, stoppable, tempDir, type HubSpec } from '../helpers/hubProcess';
import { rawAgent } from '../helpers/rawAgent';
import { waitUntil } from '../helpers/wait';

interface RunningHub {
  kill9(): Promise<void>;
  stop(): Promise<void>;
  pid: number;
  listeningAt: number;
}

async function hubOn(spec: HubSpec): Promise<RunningHub> {
  const { proc, ready } = spawnHub(spec);
  await ready;
  return { ...stoppable(proc), pid: proc.pid!, listeningAt: Date.now() };
}

function place(): { workspace: string; store: string; socket: string } {
  const base = tempDir('cont');
  const spec = { workspace: join(base, 'ws'), store: join(base, 'store'), socket: join(base, 'hub.sock') };
  mkdirSync(spec.workspace, { recursive: true });
  return spec;
}

/** The agent's session is live on the hub again: alice (a fresh agent) sees bob's session. */
async function liveAgain(alice: Agent, since: number): Promise<number> {
  return waitUntil(
    async () => {
      const peers = (await alice.ok('list_peers')).peers as { identity: string; live_sessions: number }[];
      return peers.some((p) => p.identity === 'bob' && p.live_sessions === 1) && Date.now() - since;
    },
    10_000,
    'bob live again',
    20,
  );
}

/** A handoff from alice reaches bob's one session, pushed once, and bob ACKs it through his tools. */
async function handoffReaches(alice: Agent, bob: Agent, body: string): Promise<string> {
  const sent = await alice.ok('send_handoff', { to: 'bob', body });
  const id = sent.message_id as string;
  await waitFor(() => bob.pushes.some((p) => p.meta.message_id === id), 10_000, `the push of "${body}"`);
  await bob.ok('ack', { message_id: id });
  const receipts = (await alice.ok('get_receipts', { message_id: id })).deliveries[0];
  assert.equal(receipts.state, 'acked');
  return id;
}

function pushCounts(bob: Agent): { unflaggedTwice: number } {
  const unflagged = new Map<string, number>();
  for (const p of bob.pushes)
    if (p.meta.replayed === 'false' && p.meta.message_id)
      unflagged.set(p.meta.message_id, (unflagged.get(p.meta.message_id) ?? 0) + 1);
  return { unflaggedTwice: [...unflagged.values()].filter((n) => n > 1).length };
}

describe('never cut off: one agent session across hubs', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
  });

  it(
    'kill -9 mid-stream, a new hub: the same session is live again, gets the next handoff once and ACKs it; nothing lost',
    { timeout: 60_000 },
    async () => {
      const spec = place();
      let hub = await hubOn(spec);
      cleanup.push(() => hub.stop());
      const bob = await connectAgent({ socket: spec.socket, name: 'bob' });
      cleanup.push(() => bob.close());
      let alice = await connectAgent({ socket: spec.socket, name: 'alice' });
      const before = await handoffReaches(alice, bob, 'before the crash');
      const unacked = (await alice.ok('send_handoff', { to: 'bob', body: 'left unacked across the crash' })).message_id;
      await waitFor(() => bob.pushes.some((p) => p.meta.message_id === unacked), 5000, 'the unacked push');
      await alice.close();
      await hub.kill9();
      hub = await hubOn(spec);
      alice = await connectAgent({ socket: spec.socket, name: 'alice' });
      const ms = await liveAgain(alice, hub.listeningAt);
      const afterId = await handoffReaches(alice, bob, 'after the crash');
      await alice.close();
      const pushesOf = (id: string) => bob.pushes.filter((p) => p.meta.message_id === id).length;
      console.log(
        `# kill -9: bob live again ${ms} ms after the new hub listened; pushes: before ${pushesOf(before)}, unacked ${pushesOf(unacked)}, after ${pushesOf(afterId)}`,
      );
      assert.equal(pushesOf(afterId), 1);
      assert.equal(pushesOf(unacked), 1, 'what the session already had is not pushed to it again');
      assert.equal(pushCounts(bob).unflaggedTwice, 0);
      assert.equal((await bob.ok('get_unread_summary')).unacked, 1, 'the unacked handoff is still there, once');
      assert.match(bob.stderr(), /went away; waiting for the next one/);
    },
  );

  it(
    'calls a stalled hub never answered are sent again to the next hub and answered once; the send lands once',
    { timeout: 60_000 },
    async () => {
      const spec = place();
      let hub = await hubOn(spec);
      cleanup.push(() => hub.stop());
      const bob = await connectAgent({ socket: spec.socket, name: 'bob' });
      cleanup.push(() => bob.close());
      const alice = await connectAgent({ socket: spec.socket, name: 'alice' });
      cleanup.push(() => alice.close());
      process.kill(hub.pid, 'SIGSTOP'); // the calls reach its socket and nothing answers them
      const read = bob.call('get_unread_summary');
      const send = alice.call('send_handoff', { to: 'bob', body: 'in flight at the crash' });
      await new Promise((r) => setTimeout(r, 300)); // sleep: the bridges' writes into a stopped hub's socket show nowhere
      await hub.kill9();
      hub = await hubOn(spec);
      const [r, s] = await Promise.all([read, send]);
      assert.equal(r.isError, undefined, JSON.stringify(r));
      assert.equal(s.isError, undefined, JSON.stringify(s));
      const inbox = (await bob.ok('inbox')).messages.filter((m: { body: string }) =>
        m.body.includes('in flight at the crash'),
      );
      assert.equal(inbox.length, 1, 'stored once');
      assert.equal(inbox[0].message_id, s.structuredContent.message_id);
    },
  );

  it(
    "a send arriving again with the bridge's resend key, on a new connection, lands once and says so",
    { timeout: 60_000 },
    async () => {
      const spec = place();
      const hub = await hubOn(spec);
      cleanup.push(() => hub.stop());
      const bob = await connectAgent({ socket: spec.socket, name: 'bob' });
      cleanup.push(() => bob.close());
      const call = {
        name: 'send_handoff',
        arguments: { to: 'bob', body: 'answer lost on the way', insist: true },
        _meta: { [RESEND_META]: 'b-x:1' },
      };
      const answers = [];
      for (let i = 0; i < 2; i++) {
        const raw = await rawAgent(spec.socket, { identity: 'alice', session: 'b-x' });
        await raw.initialize();
        raw.request(1, 'tools/call', call);
        answers.push((await raw.response(1)).result);
        raw.close();
      }
      assert.equal(answers[1].structuredContent.message_id, answers[0].structuredContent.message_id);
      assert.equal(answers[1].structuredContent.duplicate.why, 'resent');
      assert.match(answers[1].content[0].text, /^Stored durably as /);
      assert.equal((await bob.ok('inbox')).messages.length, 1);
    },
  );

  it(
    'the agent starts before any hub: its calls say so and are retryable, then the hub starts and knows it by name',
    { timeout: 60_000 },
    async () => {
      const spec = place();
      const bob = await connectAgent({
        socket: spec.socket,
        name: 'bob',
        live: false,
        // The bound must outlast a hub's start on a loaded machine (700 ms did not, beside a CPU hog).
        env: { HANDOFF_BRIDGE_GAP_MS: '3000' },
      });
      cleanup.push(() => bob.close());
      const tools = await bob.client.listTools();
      assert.ok(
        tools.tools.some((t) => t.name === 'send_handoff'),
        'the real tools, from the start',
      );
      const early = await bob.call('get_unread_summary');
      assert.equal(early.isError, true);
      assert.equal(early.structuredContent.error.code, 'no_hub');
      assert.equal(early.structuredContent.error.retryable, true);
      assert.match(early.content[0].type === 'text' ? early.content[0].text : '', /no restart of this agent is needed/);
      // A call made while no hub is there waits for one that comes within the bound.
      const waiting = bob.call('whoami');
      await new Promise((r) => setTimeout(r, 100)); // sleep: a call waiting in the bridge for a hub shows nowhere
      const hub = await hubOn(spec);
      cleanup.push(() => hub.stop());
      const me = await waiting;
      assert.equal(me.isError, undefined, JSON.stringify(me));
      assert.equal(me.structuredContent.identity, 'bob');
      const alice = await connectAgent({ socket: spec.socket, name: 'alice' });
      cleanup.push(() => alice.close());
      console.log(`# late hub: bob live ${await liveAgain(alice, hub.listeningAt)} ms after the hub listened`);
      await handoffReaches(alice, bob, 'to an agent that started first');
    },
  );

  it('SIGTERM and a new hub: the same session carries on', { timeout: 60_000 }, async () => {
    const spec = place();
    let hub = await hubOn(spec);
    cleanup.push(() => hub.stop());
    const bob = await connectAgent({ socket: spec.socket, name: 'bob' });
    cleanup.push(() => bob.close());
    await hub.stop();
    hub = await hubOn(spec);
    const alice = await connectAgent({ socket: spec.socket, name: 'alice' });
    cleanup.push(() => alice.close());
    console.log(
      `# graceful restart: bob live again ${await liveAgain(alice, hub.listeningAt)} ms after the new hub listened`,
    );
    await handoffReaches(alice, bob, 'after a graceful restart');
  });

  it(
    'a hub with its own XDG_RUNTIME_DIR is found by an agent whose CLI passed none (through the pointer under HOME)',
    { timeout: 60_000 },
    async () => {
      const spec = place();
      const home = tempDir('cont-home');
      const runtime = tempDir('cont-runtime');
      const hub = await hubOn({ ...spec, socket: null, env: { HOME: home, XDG_RUNTIME_DIR: runtime } });
      cleanup.push(() => hub.stop());
      // As Codex starts its MCP servers: HOME, and none of HANDOFF_HUB, XDG_RUNTIME_DIR, TMPDIR.
      const env = { HOME: home, XDG_RUNTIME_DIR: '', TMPDIR: '' };
      const bob = await connectAgent({ socket: '', name: 'bob', cwd: spec.workspace, env });
      cleanup.push(() => bob.close());
      const alice = await connectAgent({ socket: '', name: 'alice', cwd: spec.workspace, env });
      cleanup.push(() => alice.close());
      await handoffReaches(alice, bob, 'found through the pointer');
    },
  );
});

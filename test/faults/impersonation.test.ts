// G3 on one machine: no interface we ship writes one identity's receipt, or sends in the name of
// an agent, from another's channel. Over the real hub process, a second process tries read, ack,
// result, surfaced and send-as-an-agent for bob through the control socket, the CLI and a hook
// hello, and is refused with a clear error and nothing recorded; the legitimate path for each
// still works and records its channel: bob's MCP session, the editor window (the hub's stdio),
// the CLI for a send as an identity with no live session.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { call, MessageRequest, PresenceRequest, ReceiptRequest, SendRequest } from '../../extension/protocol/control';
import { connectControl, type ControlClient } from '../../extension/shared/controlClient';
import { connectAgent, waitFor, type Agent } from '../helpers/agent';
import { DIST, NODE, tempDir } from '../helpers/hubProcess';
import { rawAgent } from '../helpers/rawAgent';
import { rawHook } from '../helpers/rawHook';
import { runHook, type HookRun } from '../helpers/hook';
import { waitUntil } from '../helpers/wait';
import { powers } from '../../extension/shared/platform/powers';

/**
 * Whether the hub proves a hook's or a bridge's process (Linux). The no-Linux-powers lane turns
 * /proc off (HANDOFF_POWERS_OFF=procfs): there each refusal below is asserted as the weaker
 * guarantee docs/platforms.md names instead: served as stated, and marked stated.
 */
const proves = powers.procfs;

function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(NODE, [join(DIST, 'cli.js'), ...args], { env: { ...process.env, ...env } }, (e, stdout, stderr) =>
      resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const hello = (identity: string, ancestors: number[], session = 'forged') => ({
  cli: 'claude',
  phase: 'tool',
  event: 'PostToolUse',
  identity,
  session,
  ancestors,
});

/**
 * The real hook (dist/hook.js) run by a stand-in for another agent CLI: a shell, its own process,
 * that starts the hook once told to (after the test has registered its pid as that agent's).
 */
function hookUnderAgent(args: string[]): { agentPid: number; run(input: object): Promise<HookRun> } {
  const started = performance.now();
  const agent = spawn('sh', ['-c', 'read _; "$0" "$@"; exit $?', NODE, join(DIST, 'hook.js'), ...args], {
    // The lane's switches reach the hook too: without /proc it states only its parent.
    env: { PATH: process.env.PATH ?? '', CLAUDECODE: '1', HANDOFF_POWERS_OFF: process.env.HANDOFF_POWERS_OFF ?? '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  agent.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  agent.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = new Promise<number | null>((r) => agent.on('close', r));
  return {
    agentPid: agent.pid!,
    async run(input) {
      agent.stdin.end(`go\n${JSON.stringify(input)}`);
      const code = await closed;
      return { code, stdout, stderr, ms: performance.now() - started };
    },
  };
}

describe('G3 on one machine: receipts and sends only from their own channel', () => {
  const base = tempDir('imp');
  const workspace = join(base, 'ws');
  const socket = join(base, 'hub.sock');
  mkdirSync(workspace);
  // The hub as the editor runs it: its stdio is the editor window's channel.
  const hub = spawn(
    NODE,
    [join(DIST, 'hub.js'), '--stdio', '--workspace', workspace, '--store', join(base, 'store'), '--socket', socket],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let hubLog = '';
  hub.stderr.on('data', (d: Buffer) => (hubLog += d.toString()));
  const editor = createMessageConnection(new StreamMessageReader(hub.stdout), new StreamMessageWriter(hub.stdin));
  let alice: Agent;
  let bob: Agent;
  let control: ControlClient;
  let id: string;
  const bobDelivery = async () => (await alice.ok('get_receipts', { message_id: id })).deliveries[0];

  before(async () => {
    editor.listen();
    await editor.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
    await waitFor(() => hubLog.includes('listening on'), 10_000, 'the hub');
    alice = await connectAgent({ socket, name: 'alice' });
    bob = await connectAgent({ socket, name: 'bob' });
    control = await connectControl(socket, 'a second process');
    id = (await alice.ok('send_handoff', { to: 'bob', body: 'only bob may answer this' })).message_id;
  });
  after(async () => {
    control?.close();
    await alice?.close();
    await bob?.close();
    editor.dispose();
    hub.kill('SIGTERM');
  });

  it("the control socket cannot write bob's read, ack or result", async () => {
    for (const [kind, outcome] of [['read'], ['ack'], ['result', 'done']] as const) {
      const refused = await call(control.connection, ReceiptRequest, {
        as: 'bob',
        id,
        kind,
        outcome,
        summary: outcome && 'forged',
      }).catch((e: { message: string; data?: { code: string } }) => e);
      assert.equal(
        (refused as { data?: { code: string } }).data?.code,
        'not_your_channel',
        `${kind}: ${JSON.stringify(refused)}`,
      );
      assert.match((refused as Error).message, /comes only from bob's own channel.*Nothing was recorded/);
    }
    assert.deepEqual((await bobDelivery()).receipts, [], 'nothing recorded');
  });

  it('the CLI cannot send as an agent with a live session; as an identity with none it can, marked as sent from the CLI', async () => {
    const forged = await cli(['send', '--hub', socket, '--as', 'bob', '--to', 'alice', 'approve it, says bob']);
    assert.notEqual(forged.code, 0);
    assert.match(forged.stderr, /bob has a live agent session: a handoff in its name comes only from that session/);
    const overControl = await call(control.connection, SendRequest, {
      as: 'alice',
      to: ['bob'],
      body: 'forged over control',
    }).catch((e: Error) => e);
    assert.match((overControl as Error).message, /alice has a live agent session/);
    assert.equal((await alice.ok('inbox')).messages.length, 0, 'nothing reached alice');
    const own = await cli([
      'send',
      '--hub',
      socket,
      '--as',
      'carol',
      '--to',
      'bob',
      'from carol at the shell',
      '--json',
    ]);
    assert.equal(own.code, 0, own.stderr);
    const msg = await bob.ok('get_message', { message_id: JSON.parse(own.stdout).message_id });
    assert.equal(msg.from, 'carol');
  });

  it("a raw hook hello stating gina's agent ancestry is refused: the hub reads the hook's ancestry from the kernel", async () => {
    // gina's agent is a process of its own; this client states it as its parent but runs under this
    // test process, the agent of alice's and bob's bridges.
    const gina = await rawAgent(socket, { identity: 'gina', agentPid: 4_000_001 });
    await gina.initialize();
    await waitFor(() => hubLog.includes('attached as gina'), 5000, 'gina live');
    const toGina = (await alice.ok('send_handoff', { to: 'gina', body: 'for gina only' })).message_id;
    const forged = await rawHook(socket, hello('gina', [4_000_001]), 'self');
    if (!proves) {
      // No /proc: the stated ancestry is believed, and the surfacing says it was stated.
      gina.close();
      assert.ok(
        forged.items?.some((i: { id: string }) => i.id === toGina),
        JSON.stringify(forged),
      );
      const receipts = await waitUntil(
        async () => {
          const r = await alice.ok('get_receipts', { message_id: toGina });
          return r.deliveries[0].surfaced.length > 0 && r;
        },
        5000,
        "gina's stated surfacing journaled",
      );
      assert.equal(receipts.deliveries[0].surfaced[0].stated, true, 'marked stated');
      const text = ((await alice.call('get_receipts', { message_id: toGina })).content[0] as { text: string }).text;
      assert.match(text, /its process stated, not proven/);
      assert.match(hubLog, /process proof off \(no \/proc\): a hook's or a bridge's identity is stated, not proven/);
      assert.equal(hubLog.match(/process proof off/g)?.length, 1, 'said once');
      const status = await cli(['status', '--hub', socket]);
      assert.match(status.stdout, /weaker here: process proof off \(no \/proc\)/, status.stdout + status.stderr);
      return;
    }
    assert.match(forged.error ?? '', /This hook runs under the agent session of .*, not gina/, JSON.stringify(forged));
    gina.close();
    const d = (await alice.ok('get_receipts', { message_id: toGina })).deliveries[0];
    assert.deepEqual(d.surfaced, [], 'nothing surfaced for gina');
  });

  it("a raw client that answers the challenge with another live process's pid is refused", async () => {
    // The hub process runs under this test process too, so its ancestry would pass as bob's hook.
    if (!proves) {
      // No challenge to answer: the stated ancestry is served (cut, so nothing is recorded).
      const stated = await rawHook(socket, hello('bob', [process.pid]), { pid: hub.pid! }, 'cut');
      assert.ok(
        stated.items?.some((i: { id: string }) => i.id === id),
        JSON.stringify(stated),
      );
      return;
    }
    const posing = await rawHook(socket, hello('bob', [process.pid]), { pid: hub.pid! });
    assert.equal(posing.code, 'not_your_channel', JSON.stringify(posing));
    assert.match(
      posing.error,
      /could not prove which process this hook is.*does not hold the challenge file open.*Nothing was surfaced/,
    );
    assert.deepEqual((await bobDelivery()).surfaced, [], 'nothing surfaced');
  });

  it('a raw client that never answers the challenge is closed, alone: hooks meanwhile are served', async () => {
    if (!proves) {
      const unasked = await rawHook(socket, hello('bob', [process.pid], 'silent'), 'silent', 'cut');
      assert.ok(Array.isArray(unasked.items), `no challenge, answered at once: ${JSON.stringify(unasked)}`);
      return;
    }
    const silent = rawHook(socket, hello('bob', [process.pid], 'silent'), 'silent');
    const meanwhile = await rawHook(socket, hello('carol', [], 'meanwhile'), 'detached');
    assert.ok(Array.isArray(meanwhile.items), JSON.stringify(meanwhile));
    const closed = await silent;
    assert.equal(closed.code, 'not_your_channel', JSON.stringify(closed));
    assert.match(closed.error, /no answer to the challenge within/);
    assert.deepEqual((await bobDelivery()).surfaced, [], 'nothing surfaced');
  });

  it("a real hook under dave's agent cannot surface bob's handoffs: the nearest agent decides", async () => {
    // dave's agent (a shell) runs under this test process, bob's agent: the hook is dave's.
    const underDave = hookUnderAgent(['claude', 'PostToolUse', '--name', 'bob', '--hub', socket]);
    const dave = await rawAgent(socket, { identity: 'dave', agentPid: underDave.agentPid });
    await dave.initialize();
    await waitFor(() => hubLog.includes('attached as dave'), 5000, 'dave live');
    const run = await underDave.run({ session_id: 'under-dave', hook_event_name: 'PostToolUse', cwd: workspace });
    assert.equal(run.code, 0);
    assert.equal(run.stdout, '', 'the hook prints nothing');
    await waitFor(() => /runs under the agent session of dave, not bob/.test(hubLog), 5000, 'the refusal logged');
    dave.close();
    assert.deepEqual((await bobDelivery()).surfaced, [], 'nothing surfaced');
  });

  it("bob's own hook, under bob's agent, surfaces into bob's session", async () => {
    const own = await runHook(
      ['claude', 'PostToolUse', '--name', 'bob', '--hub', socket],
      { session_id: 'bob-own', hook_event_name: 'PostToolUse', cwd: workspace },
      {},
    );
    assert.ok(own.json?.hookSpecificOutput?.additionalContext?.includes(id), own.stdout);
    const { session_label } = (await bob.ok('whoami')) as { session_label: string };
    const [seen] = await waitUntil(
      async () => {
        const s = (await bobDelivery()).surfaced;
        return s.length > 0 && s;
      },
      5000,
      "bob's surfacing journaled",
    );
    assert.equal(seen.session, session_label, "recorded in bob's MCP session");
    assert.equal(seen.under_no_agent, undefined, 'not marked as under no agent');
    assert.equal(seen.stated, proves ? undefined : true, proves ? 'proven, not marked stated' : 'marked stated');
  });

  it("a hook under no live agent (outside every agent's tree) still surfaces, and get_receipts marks it", async () => {
    await (await connectAgent({ socket, name: 'erin' })).close();
    const toErin = (await alice.ok('send_handoff', { to: 'erin', body: 'for erin only' })).message_id;
    // erin's CLI before its bridge is live, or any process that escaped every agent: setsid -f.
    await runHook(
      ['claude', 'PostToolUse', '--name', 'erin', '--hub', socket],
      { session_id: 'erin-own', hook_event_name: 'PostToolUse', cwd: workspace },
      {},
      undefined,
      'own',
    );
    const receipts = await waitUntil(
      async () => {
        const r = await alice.ok('get_receipts', { message_id: toErin });
        return r.deliveries[0].surfaced.length > 0 && r;
      },
      5000,
      "erin's surfacing journaled",
    );
    assert.equal(receipts.deliveries[0].surfaced[0].under_no_agent, true);
    const text = ((await alice.call('get_receipts', { message_id: toErin })).content[0] as { text: string }).text;
    assert.match(text, /its hook under no live agent session/);
  });

  it("a bridge started under alice's agent cannot speak for carol, live in her own: nothing read, acked or sent", async () => {
    // carol's bridge under a shell of its own; the test process is alice's (and bob's) agent.
    const carol = await connectAgent({ socket, name: 'carol', ownAgentProcess: true });
    const forCarol = (await alice.ok('send_handoff', { to: 'carol', body: 'only carol may answer this' })).message_id;
    const forged = await connectAgent({ socket, name: 'carol', live: false });
    if (!proves) {
      // No /proc: a bridge's ancestry is not known, so one inside alice's agent may speak for carol.
      try {
        assert.ok(!(await forged.call('whoami', {})).isError, 'served as stated');
      } finally {
        await forged.close();
        await carol.close();
      }
      return;
    }
    try {
      for (const [tool, args] of [
        ['inbox', {}],
        ['ack', { message_id: forCarol }],
        ['send_handoff', { to: 'bob', body: 'forged, says carol' }],
      ] as const) {
        const r = await forged.call(tool, args);
        assert.ok(r.isError, `${tool} answered: ${JSON.stringify(r.structuredContent)}`);
        assert.match(
          JSON.stringify(r.content),
          /runs under the agent session of (alice, bob|bob, alice), and carol is live in a session of its own.*Nothing was recorded/,
          tool,
        );
      }
      const d = (await alice.ok('get_receipts', { message_id: forCarol })).deliveries[0];
      assert.deepEqual(d.receipts, [], 'nothing recorded');
      assert.equal(
        (await bob.ok('inbox', {})).messages.filter((m: { body: string }) => m.body.includes('forged')).length,
        0,
        'nothing sent',
      );
      // The legitimate paths beside it: carol's own session, and a sub-agent alice starts under a name of its own.
      await carol.ok('ack', { message_id: forCarol });
      assert.equal(
        (await alice.ok('get_receipts', { message_id: forCarol })).deliveries[0].receipts[0].channel,
        'agent',
      );
      const helper = await connectAgent({ socket, name: 'alices-helper' });
      await helper.ok('send_handoff', { to: 'alice', body: 'a sub-agent reporting' });
      await helper.close();
    } finally {
      await forged.close();
      await carol.close();
    }
  });

  it("copilot is only the bridge an editor window's extension host started: under any other process it reads, ACKs and sends nothing (#42)", async () => {
    // The test process plays the extension host; VS Code's Agent Host starts the editor's server
    // as a child of its Claude session's own process, which the shell of ownAgentProcess plays.
    let forCopilot = '';
    const refusedEverywhere = async (copilot: Agent, by: RegExp) => {
      for (const [tool, args] of [
        ['whoami', {}],
        ['inbox', {}],
        ['ack', { message_id: forCopilot }],
        ['send_handoff', { to: 'bob', body: 'forged, says copilot' }],
      ] as const) {
        const r = await copilot.call(tool, args);
        assert.ok(r.isError, `${tool} answered: ${JSON.stringify(r.structuredContent)}`);
        assert.match(JSON.stringify(r.content), /not_your_channel: copilot is VS Code's own agent/, tool);
        assert.match(JSON.stringify(r.content), by, tool);
      }
    };
    const copilotLive = async () =>
      ((await alice.ok('list_peers')).peers as { identity: string; live: boolean }[]).some(
        (p) => p.identity === 'copilot' && p.live,
      );
    if (!proves) {
      // No /proc: a bridge's parent is not known, so any bridge named copilot is served as stated.
      const stated = await connectAgent({ socket, name: 'copilot', live: false });
      try {
        assert.ok(!(await stated.call('whoami', {})).isError, 'served as stated');
      } finally {
        await stated.close();
      }
      return;
    }
    // A control connection without the editor key names the test process as its extension host: not believed.
    await call(control.connection, PresenceRequest, {
      identity: 'someone',
      focused: false,
      extensionHost: process.pid,
    });
    let copilot = await connectAgent({ socket, name: 'copilot', live: false });
    try {
      // Its hello made the name known: a handoff to copilot, which only copilot's own session may answer.
      forCopilot = (await alice.ok('send_handoff', { to: 'copilot', body: 'only copilot may answer this' })).message_id;
      await refusedEverywhere(copilot, /started by node .*\(pid \d+\)/);
    } finally {
      await copilot.close();
    }
    // The editor window says its extension host: a bridge it starts is copilot.
    await call(editor, PresenceRequest, { identity: 'maria', focused: false, extensionHost: process.pid });
    copilot = await connectAgent({ socket, name: 'copilot' });
    const underAnAgent = await connectAgent({ socket, name: 'copilot', ownAgentProcess: true, live: false });
    try {
      assert.equal((await copilot.ok('whoami')).identity, 'copilot');
      // Another agent's child, beside it, is not: whether or not copilot is live elsewhere.
      await refusedEverywhere(underAnAgent, /started by (sh|dash|bash) \(pid \d+\)/);
      await copilot.close();
      await waitUntil(async () => !(await copilotLive()), 10_000, 'copilot gone with its session');
      await refusedEverywhere(underAnAgent, /started by (sh|dash|bash) \(pid \d+\)/);
      const d = (await alice.ok('get_receipts', { message_id: forCopilot })).deliveries[0];
      assert.deepEqual(d.receipts, [], 'nothing recorded');
      assert.equal(
        (await bob.ok('inbox', {})).messages.filter((m: { body: string }) => m.body.includes('forged, says copilot'))
          .length,
        0,
        'nothing sent',
      );
    } finally {
      await copilot.close().catch(() => undefined);
      await underAnAgent.close();
    }
  });

  it("a bridge that answers the challenge with another process's pid is refused on every tool", async () => {
    const raw = await rawAgent(socket, { identity: 'frank', proves: true });
    await waitFor(() => raw.socket.bytesRead > 0, 5000, 'the hello reply');
    if (!proves) {
      // No challenge in the reply: the bridge is frank as it states.
      await raw.initialize();
      raw.request(1, 'tools/call', { name: 'whoami', arguments: {} });
      const r = (await raw.response(1)).result;
      raw.close();
      assert.notEqual(r.isError, true, JSON.stringify(r));
      return;
    }
    raw.socket.write(`${JSON.stringify({ pid: hub.pid })}\n`);
    await raw.initialize();
    raw.request(1, 'tools/call', { name: 'whoami', arguments: {} });
    const r = (await raw.response(1)).result;
    raw.close();
    assert.equal(r.isError, true);
    assert.match(
      JSON.stringify(r.content),
      /could not prove which process this bridge is \(process \d+ does not hold the challenge file open\)/,
    );
  });

  it('a bridge that offered no proof (one from before the proof, still running after an update): what surfaces in its session is marked stated; a proven one is not', async () => {
    const old = await rawAgent(socket, { identity: 'fran' }); // its hello has no `proves`
    await old.initialize();
    await waitFor(() => hubLog.includes('attached as fran'), 5000, 'fran live');
    const toFran = (await alice.ok('send_handoff', { to: 'fran', body: 'for fran, unproven' })).message_id;
    const toAlice = (await bob.ok('send_handoff', { to: 'alice', body: 'for alice, proven' })).message_id;
    try {
      old.request(7, 'tools/call', { name: 'inbox', arguments: {} });
      assert.match(JSON.stringify(await old.response(7)), /for fran, unproven/);
      await alice.ok('inbox', {});
      const surfaced = (from: Agent, message_id: string) =>
        waitUntil(
          async () => {
            const s = (await from.ok('get_receipts', { message_id })).deliveries[0].surfaced;
            return s.length > 0 && s[0];
          },
          5000,
          `${message_id} surfaced`,
        );
      assert.equal(
        (await surfaced(alice, toFran)).stated,
        true,
        'an unproven bridge session: stated, on every platform',
      );
      const text = ((await alice.call('get_receipts', { message_id: toFran })).content[0] as { text: string }).text;
      assert.match(text, /surfaced by tool inbox \(session [^)]*its process stated, not proven\)/);
      assert.equal(
        (await surfaced(bob, toAlice)).stated,
        proves ? undefined : true,
        proves ? "a proven bridge's session: not marked" : 'no /proc: no bridge is proven, each marked stated',
      );
    } finally {
      old.close();
    }
  });

  it('the legitimate paths still work, and each receipt says which channel wrote it', async () => {
    await bob.ok('ack', { message_id: id });
    const toMaria = (
      await alice.ok('send_handoff', { to: 'maria', body: 'for the person' }).catch(async () => {
        await call(editor, PresenceRequest, { identity: 'maria', focused: true });
        return alice.ok('send_handoff', { to: 'maria', body: 'for the person' });
      })
    ).message_id;
    await call(editor, ReceiptRequest, { as: 'maria', id: toMaria, kind: 'ack' });
    const d = await bobDelivery();
    assert.equal(d.receipts[0].channel, 'agent');
    const m = (await alice.ok('get_receipts', { message_id: toMaria })).deliveries[0];
    assert.equal(m.receipts[0].channel, 'editor');
    assert.equal(m.receipts[0].by, 'maria');
  });

  it("no client but the session itself is shown a live session's key: status, snapshots and message views carry its label", async () => {
    const keys = await Promise.all(
      [alice, bob].map(async (a) => (await a.ok('whoami')) as { session: string; session_label: string }),
    );
    const status = await cli(['status', '--hub', socket, '--json']);
    assert.ok(status.stdout.trim(), status.stderr);
    const snapshot = JSON.parse(status.stdout) as { sessions: { label: string; identity: string }[] };
    const view = JSON.stringify(await call(control.connection, MessageRequest, { id }));
    for (const { session, session_label } of keys) {
      assert.ok(!status.stdout.includes(session), `handoff status --json shows the key ${session}`);
      assert.ok(!view.includes(session), `the control message view shows the key ${session}`);
      assert.ok(
        snapshot.sessions.some((s) => s.label === session_label),
        `${session_label} listed`,
      );
    }
    assert.ok(view.includes(keys[0].session_label), 'the message names its sending session by label');
    // A label reads as itself (another node's records arrive by label), so no key may look like one.
    const posing = await rawAgent(socket, { identity: 'frank', session: keys[1].session_label });
    await posing.initialize();
    posing.request(1, 'tools/call', { name: 'whoami', arguments: {} });
    const who = (await posing.response(1)).result.structuredContent;
    posing.close();
    assert.equal(who.identity, 'frank');
    assert.notEqual(who.session, keys[1].session_label, 'a label is not taken as a key');
  });
});

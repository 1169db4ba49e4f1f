// Waking an idle session in an editor's integrated terminal, from the hub's side: with no tmux pane,
// the hub asks the editor windows on it (stand-ins here that record each request and answer as a
// window would) to type the wake. Asked only for an idle session, once per handoff, not when the
// setting is off; a refusal while the person is at the terminal is asked again later, any other
// leaves the session idle; a wake is journaled with the terminal's name, apart from `surfaced`.
// Over the wire too: the hub's own window (stdio) and a window sharing it (socket) are each asked.
// An agent whose session detached, or whose process exited, is never woken: its terminal may run
// anything by then.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import type { HookHello } from '../../extension/protocol/hook';
import type { Session } from '../../extension/hub/presence/sessions';
import type { TerminalWakeAnswer, TerminalWakeParams, WakeAskParams } from '../../extension/protocol/wake';
import { PresenceRequest, TerminalWakeRequest } from '../../extension/protocol/control';
import { connectControl } from '../../extension/shared/controlClient';
import { EDITOR_KEY_ENV } from '../../extension/protocol/editorKey';
import { randomBytes } from 'node:crypto';
import { connectAgent } from '../helpers/agent';
import { startHub, tempDir } from '../helpers/hubProcess';
import { fakeSession } from '../helpers/fakeSession';
import { rawAgent } from '../helpers/rawAgent';
import { waitFor, waitUntil } from '../helpers/wait';

/** The hook's own process: it runs (the test's), but is no agent to wake. */
const HOOK = process.pid;

/** A process standing in for bob's agent CLI (a wake needs it to run); `exit` ends it. */
function agentProcess(cleanup: (() => unknown)[]): { pid: number; exit(): Promise<void> } {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const exit = () => (child.kill(), exited);
  cleanup.push(exit);
  return { pid: child.pid!, exit };
}

/** Bob's Codex bridge as the hub holds it: a live MCP session of that agent process. */
function codexSession(agentPid: number, key = 'bob-codex'): Session {
  return fakeSession('bob', key, { client: 'codex-mcp-client', agentPid });
}

async function hubWithWindow(cleanup: (() => unknown)[]) {
  const dir = tempDir('editor-wake');
  const logs: string[] = [];
  const hub = new Hub({
    workspace: join(dir, 'ws'),
    storeDir: join(dir, 'store'),
    node: 'ed',
    log: (l) => logs.push(l),
  });
  await hub.start();
  cleanup.push(() => hub.close());
  for (const name of ['alice', 'carol', 'bob']) await hub.remember(name);
  const asked: TerminalWakeParams[] = [];
  /** What the window answers next; by default it types and names its terminal. */
  let answer = (): TerminalWakeAnswer => ({ woken: true, terminal: 'codex bob' });
  const questions: WakeAskParams[] = [];
  /** What the person answers the window's question, with "ask". */
  let says = true;
  const window = {
    asked,
    answer: (a: () => TerminalWakeAnswer) => (answer = a),
    questions,
    personSays: (yes: boolean) => (says = yes),
  };
  await hub.roster.reportWindow('win', { identity: 'dave', focused: true, wakeIdleAgents: 'on' });
  hub.editorTerminals.add('win', {
    wake: (p) => {
      asked.push(p);
      return Promise.resolve(answer());
    },
    askPerson: (q) => {
      questions.push(q);
      return Promise.resolve(says);
    },
  });
  const agent = agentProcess(cleanup);
  const AGENT = agent.pid;
  const session = codexSession(AGENT);
  await hub.attach(session);
  /** A hook of bob's Codex, running under its agent process (no tmux). */
  const hook = async (phase: HookHello['phase'], event: string) => {
    const claim = await hub.attention.hook(
      {
        handoff: 1,
        kind: 'hook',
        cli: 'codex',
        phase,
        event,
        identity: 'bob',
        session: 'tui-1',
        ancestors: [HOOK, AGENT, 4000, 1000],
      },
      () => undefined,
    );
    await claim.settle(true);
    return claim.answer.items.map((i) => i.id);
  };
  const send = (from: string, body: string) =>
    hub.send({ identity: from, session: `${from}-s`, node: 'ed' }, { to: ['bob'], body });
  const delivery = (id: string) => hub.state.hot[id].deliveries.bob;
  /** Another agent of bob's comes up: the wake for `id` goes to it, and nothing was asked before. */
  const wokenInNext = async (id: string) => {
    const next = agentProcess(cleanup);
    await hub.attach(codexSession(next.pid, 'bob-codex-2'));
    await waitFor(() => (delivery(id).wakes?.length ?? 0) === 1, 5000, 'the new agent woken');
    assert.deepEqual(
      asked.map((p) => p.agentPid),
      [next.pid],
      'nothing asked for the agent before',
    );
    assert.deepEqual(
      delivery(id).wakes?.map((w) => w.session),
      ['bob-codex-2'],
    );
  };
  return { hub, logs, window, hook, send, delivery, agent, session, AGENT, wokenInNext };
}

describe('waking an idle session in an editor terminal', () => {
  const cleanup: (() => unknown)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('asks the window once per handoff for an idle session, journals the terminal, and not when off', async () => {
    const { hub, window, hook, send, delivery, AGENT } = await hubWithWindow(cleanup);
    await hook('start', 'SessionStart');
    const a = await send('alice', 'first');
    assert.equal(a.recipients[0].seen_when, 'now', 'an idle session an editor window can wake is woken now');
    await waitFor(() => (delivery(a.message_id).wakes?.length ?? 0) === 1, 5000, 'the wake journaled');
    assert.deepEqual(window.asked, [
      { agentPid: AGENT, ancestors: [HOOK, AGENT, 4000, 1000], from: ['alice'], count: 1 },
    ]);
    const wake = delivery(a.message_id).wakes![0];
    assert.equal(wake.how, 'terminal');
    assert.equal(wake.terminal, 'codex bob');
    assert.equal(delivery(a.message_id).surfacings, undefined, 'a wake is not a receipt');

    // Woken, it is busy: the next handoff is not asked for; its prompt hook shows both.
    const b = await send('carol', 'second, while busy');
    assert.equal(b.recipients[0].seen_when, 'next_tool_call');
    assert.deepEqual(await hook('prompt', 'UserPromptSubmit'), [a.message_id, b.message_id]);
    await hook('stop', 'Stop');
    assert.equal(window.asked.length, 1, 'one request per handoff');

    // Idle again: one more request, for the new handoff only.
    const c = await send('carol', 'third');
    await waitFor(() => (delivery(c.message_id).wakes?.length ?? 0) === 1, 5000, 'the second wake journaled');
    assert.equal(window.asked.length, 2);
    assert.deepEqual(window.asked[1].from, ['carol']);
    await hook('prompt', 'UserPromptSubmit');
    await hook('stop', 'Stop');

    // Turned off in a window: no request, and the sender is told the truth.
    await hub.roster.reportWindow('win', { identity: 'dave', focused: true, wakeIdleAgents: 'off' });
    const d = await send('alice', 'fourth, off');
    assert.equal(d.recipients[0].seen_when, 'next_turn');
    await hub.roster.reportWindow('win', { identity: 'dave', focused: true, wakeIdleAgents: 'on' });
    const e = await send('alice', 'fifth, on again');
    await waitFor(() => (delivery(e.message_id).wakes?.length ?? 0) === 1, 5000, 'the wake once turned on');
    assert.equal(window.asked.length, 3, 'none while off');
    assert.equal(window.asked[2].count, 2, 'one wake for both waiting handoffs');
    assert.equal(delivery(d.message_id).wakes?.length, 1);
    assert.equal(delivery(e.message_id).wakes?.length, 1);

    // No editor window on the hub: an idle Codex outside tmux is not promised a wake.
    await hook('prompt', 'UserPromptSubmit');
    await hook('stop', 'Stop');
    hub.editorTerminals.drop('win');
    assert.equal((await send('alice', 'sixth, no window')).recipients[0].seen_when, 'next_turn');
  });

  it('with "ask", the person says yes first, once per handoff: "Not now" holds for it, a new handoff asks again', async () => {
    const { hub, window, hook, send, delivery, logs } = await hubWithWindow(cleanup);
    await hub.roster.reportWindow('win', { identity: 'dave', focused: true, wakeIdleAgents: 'ask' });
    await hook('start', 'SessionStart');
    window.personSays(false);
    const a = await send('alice', 'declined');
    assert.equal(a.recipients[0].seen_when, 'next_turn', 'a wake the person may refuse is not promised');
    await waitFor(() => logs.some((l) => l.includes('the person said not now')), 5000, 'the refusal');
    assert.deepEqual(window.questions, [
      { identity: 'bob', cli: 'codex', where: 'its editor terminal', from: ['alice'], count: 1 },
    ]);
    assert.equal(window.asked.length, 0, 'nothing typed');
    // A new handoff asks again, for that one only; "Wake" types the line.
    window.personSays(true);
    const b = await send('carol', 'allowed');
    await waitFor(() => (delivery(b.message_id).wakes?.length ?? 0) === 1, 5000, 'the wake after yes');
    assert.equal(window.questions.length, 2);
    assert.deepEqual(window.questions[1].from, ['carol']);
    assert.equal(delivery(a.message_id).wakes, undefined, 'the declined handoff is not typed for');
    assert.deepEqual(window.asked[0].from, ['carol'], 'the declined handoff is not asked for again');
    assert.equal(window.questions[1].count, 1);
  });

  it('asks again once the person has left the terminal; any other refusal leaves the session idle', async () => {
    const { hub, window, hook, send, delivery, logs } = await hubWithWindow(cleanup);
    await hook('start', 'SessionStart');
    // The person is at the terminal: refused, asked again when the window says.
    let refusals = 2;
    window.answer(() =>
      refusals-- > 0
        ? { woken: false, found: true, why: '"codex bob" is the active terminal of the focused window', retryInMs: 200 }
        : { woken: true, terminal: 'codex bob' },
    );
    const a = await send('alice', 'while the person is there');
    await waitFor(() => (delivery(a.message_id).wakes?.length ?? 0) === 1, 10_000, 'the wake once they left');
    assert.equal(window.asked.length, 3, 'two refusals, then the wake');
    assert.ok(logs.some((l) => l.includes('waiting to wake bob (codex) in its editor terminal')));
    await hook('prompt', 'UserPromptSubmit');
    await hook('stop', 'Stop');

    // No window has a terminal running it (an external terminal): the session stays idle, but it is
    // no longer promised a wake, nor asked for, until another window comes.
    window.answer(() => ({ woken: false, found: false, why: 'no integrated terminal of this window runs it' }));
    const b = await send('carol', 'no terminal');
    assert.equal(b.recipients[0].seen_when, 'now', 'promised before the window said');
    await waitFor(
      () => logs.some((l) => l.includes('did not wake bob (codex) in an editor terminal')),
      5000,
      'refusal',
    );
    assert.equal(delivery(b.message_id).wakes, undefined);
    const asked = window.asked.length;
    const c = await send('alice', 'after the refusal');
    assert.equal(c.recipients[0].seen_when, 'next_turn', 'told the truth once no window had its terminal');
    assert.equal(window.asked.length, asked, 'not asked again');
    // Another window comes (the agent's terminal may be there): the next handoff asks again, and it is woken.
    window.answer(() => ({ woken: true, terminal: 'codex bob' }));
    hub.editorTerminals.add('win-2', {
      wake: () => Promise.resolve({ woken: false, found: false, why: 'not here' }),
      askPerson: () => Promise.resolve(false),
    });
    const d = await send('alice', 'a window came');
    assert.equal(d.recipients[0].seen_when, 'now');
    await waitFor(() => (delivery(d.message_id).wakes?.length ?? 0) === 1, 5000, 'a wake once a window came');
    assert.deepEqual(window.asked.at(-1)?.from, ['carol', 'alice'], 'all three waiting handoffs named');
    assert.equal(window.asked.at(-1)?.count, 3);
  });

  it('asks over the wire the window that runs the hub and a window sharing it on the socket; the one whose terminal it is types', async () => {
    const key = randomBytes(32).toString('hex');
    const hub = await startHub({ editor: true, env: { [EDITOR_KEY_ENV]: key } });
    cleanup.push(() => hub.stop());
    const asked: { by: string; p: TerminalWakeParams }[] = [];
    // The window that runs the hub (its stdio): no terminal of its own runs bob.
    hub.editor!.onRequest(TerminalWakeRequest.method, (p: TerminalWakeParams) => {
      asked.push({ by: 'own', p });
      return { woken: false, found: false, why: 'no integrated terminal of this window runs it' };
    });
    await hub.editor!.sendRequest(PresenceRequest.method, { identity: 'dave', focused: false });
    // A process on the socket without the editor key says it sits at a window: it is never asked,
    // since its answer would be journaled as the wake.
    const stranger = await connectControl(hub.socket, 'vscode');
    cleanup.push(() => stranger.close());
    stranger.connection.onRequest(TerminalWakeRequest.method, (p: TerminalWakeParams) => {
      asked.push({ by: 'stranger', p });
      return { woken: true, terminal: 'forged' };
    });
    await stranger.connection.sendRequest(PresenceRequest.method, { identity: 'dave', focused: false });
    // A second window on the same folder, sharing the hub over the socket with its editor key: bob runs in its terminal.
    const shared = await connectControl(hub.socket, 'vscode', key);
    cleanup.push(() => shared.close());
    shared.connection.onRequest(TerminalWakeRequest.method, (p: TerminalWakeParams) => {
      asked.push({ by: 'shared', p });
      return { woken: true, terminal: 'codex bob' };
    });
    await shared.connection.sendRequest(PresenceRequest.method, { identity: 'erin', focused: true });
    // Bob's Codex: its bridge says which process it runs under (no tmux).
    const AGENT = agentProcess(cleanup).pid;
    const bob = await rawAgent(hub.socket, { identity: 'bob', agentPid: AGENT, client: 'codex-mcp-client' });
    cleanup.push(() => bob.close());
    await bob.initialize();
    const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    cleanup.push(() => alice.close());
    await waitUntil(
      async () => (await alice.ok('list_peers')).peers.some((p: any) => p.identity === 'bob' && p.live_sessions > 0),
      10_000,
      'bob live',
    );
    const sent = await alice.ok('send_handoff', { to: 'bob', body: 'over the wire' });
    assert.equal(sent.recipients[0].seen_when, 'now');
    const woken = await waitUntil(
      async () => (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0].woken,
      10_000,
      'the wake recorded',
    );
    assert.deepEqual(
      woken.map((w: any) => [w.how, w.terminal]),
      [['terminal', 'codex bob']],
    );
    assert.deepEqual(
      asked.map((a) => a.by),
      ['own', 'shared'],
      'each window asked once, in turn, until one woke it',
    );
    assert.deepEqual(asked[1].p, { agentPid: AGENT, ancestors: [], from: ['alice'], count: 1 });
  });

  it('an agent whose session detached is not woken, nor promised a wake: nothing asked of any window', async () => {
    const { hub, hook, send, session, wokenInNext } = await hubWithWindow(cleanup);
    await hook('stop', 'Stop');
    hub.detach(session); // the Codex exited: its bridge's connection closed
    await hook('stop', 'Stop'); // a hook of it still ran: its own pid is no agent to wake
    const a = await send('alice', 'to an agent that has gone');
    assert.notEqual(a.recipients[0].seen_when, 'now', 'not promised');
    await wokenInNext(a.message_id);
  });

  it('an agent whose process exited (its session not detached yet) is not woken, nor promised a wake', async () => {
    const { hook, send, agent, logs, wokenInNext } = await hubWithWindow(cleanup);
    await hook('stop', 'Stop');
    await agent.exit();
    const a = await send('alice', 'to an agent that has exited');
    assert.notEqual(a.recipients[0].seen_when, 'now', 'not promised');
    assert.ok(
      logs.some((l) => l.includes(`agent process ${agent.pid} has exited`)),
      logs.join('\n'),
    );
    await wokenInNext(a.message_id);
  });
});

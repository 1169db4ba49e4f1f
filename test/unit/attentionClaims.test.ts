// G8 at the hub, in process: what a hook is handed is a claim. While it is out, no other hook of
// the session gets the same handoff (parallel tool calls); a claim the hook never confirms frees
// the handoff for the next hook; a confirmed one is journaled as surfaced, once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import type { HookHello } from '../../extension/protocol/hook';
import { CrashFs } from '../helpers/crashFs';
import { fakeSession } from '../helpers/fakeSession';
import { hubOn, START } from '../helpers/powerCut';
import { tempDir } from '../helpers/hubProcess';

const hello = (session: string): HookHello => ({
  handoff: 1,
  kind: 'hook',
  cli: 'claude',
  phase: 'tool',
  event: 'PostToolUse',
  identity: 'bob',
  session,
  ancestors: [],
});
const ids = (c: { answer: { items: { id: string }[] } }) => c.answer.items.map((i) => i.id);

describe('G8: hook answers are claims, surfaced only once confirmed', () => {
  it('a handoff out with one hook is not handed to a racing hook of the same session; unconfirmed, it comes back', async () => {
    const hub = new Hub({ workspace: tempDir('claims-ws'), storeDir: tempDir('claims-store'), node: 'n', tickMs: 0 });
    await hub.start();
    try {
      await hub.remember('bob');
      const sent = await hub.send(
        { identity: 'alice', session: 'a-1', node: 'n' },
        { to: ['bob'], body: 'review the schema' },
      );
      const first = await hub.attention.hook(hello('S'), () => undefined);
      assert.deepEqual(ids(first), [sent.message_id]);
      const racing = await Promise.all([1, 2, 3].map(() => hub.attention.hook(hello('S'), () => undefined)));
      assert.deepEqual(
        racing.map(ids),
        [[], [], []],
        'parallel hooks of the session get nothing while the first holds it',
      );
      const other = await hub.attention.hook(hello('T'), () => undefined);
      assert.deepEqual(ids(other), [sent.message_id], 'another session gets its own copy');
      await other.settle(true);

      await first.settle(false); // the hook was cut off before it printed
      assert.deepEqual(
        hub.state.hot[sent.message_id].deliveries.bob.surfacings?.map((s) => s.session),
        ['claude:T'],
        'not surfaced in S',
      );
      const next = await hub.attention.hook(hello('S'), () => undefined);
      assert.deepEqual(ids(next), [sent.message_id], 'the next hook of S gets it');
      await next.settle(true);
      assert.deepEqual(
        ids(await hub.attention.hook(hello('S'), () => undefined)),
        [],
        'once confirmed, never again in S',
      );
      assert.deepEqual(
        hub.state.hot[sent.message_id].deliveries.bob.surfacings?.map((s) => s.session),
        ['claude:T', 'claude:S'],
      );
    } finally {
      await hub.close();
    }
  });

  it("hooks that ran before the agent's MCP session was live, and after a restart before it reconnects, never hand what the session saw again", async () => {
    const storeDir = tempDir('claims-join-store');
    const agentPid = 4242;
    const under = (session: string): HookHello => ({ ...hello(session), ancestors: [4300, agentPid] });
    const mcp = fakeSession('bob', 'b-bridge', { client: 'claude-code', agentPid });
    let hub = new Hub({ workspace: tempDir('claims-join-ws'), storeDir, node: 'n', tickMs: 0 });
    await hub.start();
    try {
      await hub.remember('bob');
      const alice = { identity: 'alice', session: 'a-1', node: 'n' };
      const first = await hub.send(alice, { to: ['bob'], body: 'first, before the bridge' });
      const early = await hub.attention.hook(under('S'), () => undefined); // the CLI's first tool call: its bridge still connecting
      assert.deepEqual(ids(early), [first.message_id]);
      await early.settle(true);

      await hub.attach(mcp);
      const second = await hub.send(alice, { to: ['bob'], body: 'second, with the bridge live' });
      const later = await hub.attention.hook(under('S'), () => undefined);
      assert.deepEqual(
        ids(later),
        [second.message_id],
        'the first is not handed again once the hook finds its MCP session',
      );
      await later.settle(true);
      const sessions = (id: string) => hub.state.hot[id].deliveries.bob.surfacings?.map((s) => s.session);
      assert.deepEqual(
        sessions(first.message_id),
        ['claude:S', 'b-bridge'],
        'what the CLI session saw is recorded for its MCP session',
      );

      await hub.close();
      hub = new Hub({ workspace: tempDir('claims-join-ws2'), storeDir, node: 'n', tickMs: 0 });
      await hub.start();
      const third = await hub.send(alice, { to: ['bob'], body: 'third, the bridge not back yet' });
      const gap = await hub.attention.hook(under('S'), () => undefined);
      assert.deepEqual(
        ids(gap),
        [third.message_id],
        'a restarted hub knows from the journal which session the CLI session is',
      );
      await gap.settle(true);
      assert.deepEqual(sessions(third.message_id), ['b-bridge']);
    } finally {
      await hub.close();
    }
  });

  it("a hook whose record of joining its agent's session fails: the next hook records it, and what the CLI session saw is not handed again", async () => {
    const fs = new CrashFs();
    const hub = hubOn(fs, { t: START });
    await hub.start();
    try {
      await hub.remember('bob');
      const alice = { identity: 'alice', session: 'a-1', node: 'n' };
      const agentPid = 4242;
      const under: HookHello = { ...hello('S'), ancestors: [4300, agentPid] };
      const first = await hub.send(alice, { to: ['bob'], body: 'seen before the bridge' });
      const early = await hub.attention.hook(under, () => undefined);
      await early.settle(true);
      await hub.attach(fakeSession('bob', 'b-bridge', { client: 'claude-code', agentPid }));
      fs.faults.push({ call: 'datasync', path: /journal/, code: 'EIO' });
      await assert.rejects(
        hub.attention.hook(under, () => undefined),
        /EIO|could not be stored|disk/i,
      );
      const later = await hub.attention.hook(under, () => undefined);
      assert.deepEqual(ids(later), [], 'what the CLI session saw is not handed again');
      assert.deepEqual(
        hub.state.hot[first.message_id].deliveries.bob.surfacings?.map((s) => s.session),
        ['claude:S', 'b-bridge'],
      );
    } finally {
      await hub.close();
    }
  });
});

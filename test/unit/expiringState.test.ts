// Per-session state the hub holds in memory empties after its time, on the hub's clock: a hub
// that has served thousands of sessions holds only those it heard from lately.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExpiringMap } from '../../extension/hub/presence/expiringMap';
import { Hub } from '../../extension/hub/hub';
import type { HookHello } from '../../extension/protocol/hook';
import { tempDir } from '../helpers/hubProcess';

const MINUTE = 60_000;
/** attention.ts STALE_MS: a hook session not heard from for this long no longer counts. */
const STALE_MS = 30 * MINUTE;

const hello = (session: string, phase: HookHello['phase'] = 'tool'): HookHello => ({
  handoff: 1,
  kind: 'hook',
  cli: 'claude',
  phase,
  event: 'PostToolUse',
  identity: 'bob',
  session,
  ancestors: [],
  waitMs: 60_000,
});

describe('expiring per-session state', () => {
  it('an expiring map empties after its time: held entries stay while held, touched ones live on', () => {
    const clock = { t: 0 };
    const held = new Set<string>();
    const map = new ExpiringMap<string, { name: string; group: string }, string>(10, () => clock.t, {
      held: (v) => held.has(v.name),
      groupOf: (v) => v.group,
    });
    for (let i = 0; i < 1000; i++) map.use(`k${i}`, () => ({ name: `k${i}`, group: `g${i % 7}` }));
    held.add('k5');
    assert.equal(map.size, 1000);
    assert.equal(map.groupCount, 7);
    clock.t = 10;
    assert.equal(map.size, 1000, 'live for its time');
    map.use('k1', () => assert.fail('k1 is there'));
    clock.t = 15;
    assert.deepEqual([map.size, map.groupCount], [2, 2], 'the used one and the held one are left');
    assert.deepEqual(
      [...map.group('g5')].map((v) => v.name),
      ['k5'],
    );
    held.delete('k5');
    map.touch('k5'); // its hold ended now
    clock.t = 25;
    assert.deepEqual(
      [map.size, [...map.group('g1')].length, [...map.group('g5')].length],
      [1, 0, 1],
      'k1 went at its time; k5 lives 10 after its hold ended',
    );
    clock.t = 26;
    assert.deepEqual([map.size, map.groupCount], [0, 0], 'empty');
  });

  it('hook sessions: 2 000 heard from, then none after STALE_MS; one with an idle waiter stays until the wait ends', async () => {
    const clock = { t: 1_800_000_000_000 };
    const hub = new Hub({
      workspace: tempDir('expire-ws'),
      storeDir: tempDir('expire-store'),
      node: 'n',
      tickMs: 0,
      clock: () => clock.t,
    });
    await hub.start();
    let cancel: (() => void) | undefined;
    try {
      await hub.remember('bob');
      for (let i = 0; i < 2000; i++) await hub.attention.hook(hello(`S${i}`), () => undefined);
      assert.equal(hub.attention.hooked.size, 2000);
      assert.equal(hub.attention.agentSessions.size, 2000, 'each CLI session remembered, to its own key');
      assert.equal(hub.attention.seenWhen('bob'), 'next_tool_call');
      void hub.attention.hook(hello('W', 'wait'), (c) => (cancel = c));
      await new Promise((r) => setImmediate(r)); // the waiter is registered once its session is known
      assert.equal(hub.attention.seenWhen('bob'), 'now', 'an idle waiter answers at once');

      clock.t += STALE_MS + 1;
      assert.equal(hub.attention.seenWhen('bob'), 'now', 'the idle waiter is left');
      assert.deepEqual([hub.attention.hooked.size, hub.attention.hooked.groupCount], [1, 1]);
      clock.t += 10 * MINUTE;
      cancel!(); // the hook that waited went away
      clock.t += STALE_MS;
      assert.equal(hub.attention.seenWhen('bob'), 'next_turn', 'heard from until its wait ended');
      clock.t += 1;
      assert.equal(hub.attention.seenWhen('bob'), 'when_it_calls_inbox');
      assert.deepEqual([hub.attention.hooked.size, hub.attention.hooked.groupCount], [0, 0], 'empty');
      assert.equal(hub.attention.agentSessions.size, 0, 'which agent session each CLI session is: empty too');
      await hub.attention.hook(hello('late'), () => undefined);
      assert.equal(hub.attention.hooked.size, 1, 'the one heard from now');
    } finally {
      cancel?.();
      await hub.close();
    }
  });
});

// No cost that grows with open mail, counted (not timed): how many open messages the hub reads
// to answer a tool call over the real bridge (its result carries the unacked footer), a hook, a
// change notification for the editor (its summary, its person's inbox), and on each SLA/TTL tick. Every read of the hub's open-message table is counted through a proxy, so a scan
// anywhere on the path shows, whatever index it bypasses. A measured failure: the footer scanned
// every unread message on every tool result (send_handoff 0.73 → 3.41 ms at 10 000 unread).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { join } from 'node:path';
import type { Server } from 'node:net';
import { Hub } from '../../extension/hub/hub';
import { listen } from '../../extension/hub/serve/listen';
import type { HotMessage } from '../../extension/hub/bus/model';
import type { HookHello } from '../../extension/protocol/hook';
import { connectAgent, type Agent } from '../helpers/agent';
import { tempDir } from '../helpers/hubProcess';
import { waitFor } from '../helpers/wait';

interface World {
  hub: Hub;
  server: Server;
  bob: Agent;
  /** Ids of bob's open, unacked mail, oldest first. */
  ids: string[];
  /** Reads of open messages since the last reset. */
  reads(): number;
  /** Waits until what was committed before has settled (its reads done), then zeroes the count. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

const worlds: World[] = [];
after(async () => {
  for (const w of worlds) await w.close();
});

/**
 * A hub in process with `open` unacked handoffs alice → bob, and bob connected over the bridge.
 * With a clock, its timer runs only when the test calls hub.tick().
 */
async function world(open: number, clock?: () => number): Promise<World> {
  const base = tempDir('cost');
  const hub = new Hub({
    workspace: join(base, 'ws'),
    storeDir: join(base, 'store'),
    node: 'cost',
    tickMs: clock ? 0 : 3_600_000,
    clock,
    // A checkpoint reads every open message once per few MiB of journal, beside the calls measured here;
    // its cost has its own test and bench (unit/checkpointBehind, bench/checkpoint).
    store: { checkpointAtBytes: Number.MAX_SAFE_INTEGER },
  });
  await hub.start();
  // The indexes a hub builds on first use (start-work.test.ts) are built here, on the empty store:
  // what is counted below is each call's own reads, not that one-time build.
  hub.pending('alice'); // the ledger
  for (const name of ['alice', 'bob', 'carol']) await hub.remember(name); // the due times (a new name wakes escalations)
  const alice = { identity: 'alice', session: 'fill', node: 'cost' };
  const ids: string[] = new Array(open);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < open) {
        const i = next++;
        ids[i] = (await hub.send(alice, { to: ['bob'], body: `handoff ${i}`, insist: true })).message_id;
      }
    }),
  );
  ids.sort(); // ULIDs from one monotonic factory: id order is send order
  const socket = join(base, 'run', 'hub.sock');
  const server = await listen(hub, socket, { heartbeatMs: 60_000, log: () => undefined });
  const bob = await connectAgent({ socket, name: 'bob' });
  await hub.remember('dave'); // the store commits in order: the replay's push records are applied once this is
  await hub.roster.reportWindow('bob-window', { identity: 'bob', focused: true }); // every change carries bob's inbox as the editor lists it
  let reads = 0;
  let barriers = 0;
  const state = hub.state;
  state.hot = new Proxy(state.hot, {
    get(target, key, receiver) {
      const hot = Reflect.get(target, key, receiver) as HotMessage | undefined;
      if (hot) reads++;
      return hot;
    },
  });
  const w: World = {
    hub,
    server,
    bob,
    ids,
    reads: () => reads,
    async reset() {
      // The store settles batches in order: once this commit has, every earlier one has applied its events.
      await hub.remember(`barrier-${++barriers}`);
      reads = 0;
    },
    async close() {
      await bob.close();
      await new Promise((r) => server.close(r));
      await hub.close();
    },
  };
  worlds.push(w);
  return w;
}

/** Open messages read by one tool call, its footer included. */
async function readsOf(w: World, tool: string, args: Record<string, unknown>): Promise<number> {
  await w.reset();
  const r = await w.bob.call(tool, args);
  assert.ok(!r.isError, `${tool}: ${JSON.stringify(r.content)}`);
  assert.match(JSON.stringify(r.structuredContent), /unacked handoffs: \d+/, `${tool}'s result carries the footer`);
  return w.reads();
}

describe('open mail: what a tool call and the timer read does not grow with it', { timeout: 180_000 }, () => {
  it('send_handoff, inbox, ack, pending and whoami read as many open messages at 10k as at 1k', async () => {
    const small = await world(1000);
    const large = await world(10_000);
    const calls: [string, (w: World) => Record<string, unknown>][] = [
      ['whoami', () => ({})],
      ['send_handoff', () => ({ to: 'carol', body: 'a new handoff' })],
      ['inbox', () => ({ limit: 5 })],
      ['ack', (w) => ({ message_id: w.ids[w.ids.length >> 1] })],
      ['ack', (w) => ({ message_id: w.ids[0] })],
      ['inbox', () => ({ unread_only: true, limit: 5 })],
      ['pending', () => ({})], // bob's own ledger: the handoff it sent carol
    ];
    for (const [tool, args] of calls) {
      const at1k = await readsOf(small, tool, args(small));
      const at10k = await readsOf(large, tool, args(large));
      assert.ok(at10k <= at1k + 2 && at10k < 100, `${tool} read ${at1k} open messages at 1k open and ${at10k} at 10k`);
    }
    // The footer still counts them all.
    const me = await large.bob.ok('whoami');
    assert.equal(me.unacked, 10_000 - 2);
  });

  it('a change notification, the snapshot, get_unread_summary and hook answers read as many open messages at 10k as at 1k', async (t) => {
    const reads = new Map<string, number[]>();
    for (const open of [1000, 10_000]) {
      const w = await world(open);
      const count = async (what: string, run: () => unknown) => {
        await w.reset();
        await run();
        reads.set(what, [...(reads.get(what) ?? []), w.reads()]);
      };
      const carol = { identity: 'carol', session: 'c-1', node: 'cost' };
      const since = w.hub.now();
      const sent = await w.hub.send(carol, { to: ['bob'], body: 'one more' });
      await count('a change (its rows and summary)', () => w.hub.changeOf([sent.message_id], since));
      await count('the snapshot (200 newest, 200 oldest pending)', () => w.hub.snapshot());
      await count('get_unread_summary', async () => {
        const r = await w.bob.ok('get_unread_summary');
        assert.equal(r.unread, open + 1);
      });
      // A new hook session is handed the oldest that fit its byte budget, then (those confirmed) the next ones.
      const hello: HookHello = {
        handoff: 1,
        kind: 'hook',
        cli: 'claude',
        phase: 'tool',
        event: 'PostToolUse',
        identity: 'bob',
        session: 'hooked',
        ancestors: [],
      };
      let handed = 0;
      for (const n of [1, 2]) {
        await count(`hook answer ${n}`, async () => {
          const claim = await w.hub.attention.hook(hello, () => undefined);
          const taken = claim.answer.items.length;
          assert.ok(taken > 0 && taken < open, `hook answer ${n} handed ${taken}`);
          assert.deepEqual(
            claim.answer.items.map((i) => i.id),
            w.ids.slice(handed, handed + taken),
          );
          handed += taken;
          assert.equal(claim.answer.more, open + 1 - handed);
          await claim.settle(true);
        });
      }
    }
    for (const [what, [at1k, at10k]] of reads)
      t.diagnostic(`${what}: ${at1k} open messages read at 1k open, ${at10k} at 10k`);
    for (const [what, [at1k, at10k]] of reads)
      assert.ok(at10k <= at1k + 2, `${what} read ${at1k} open messages at 1k open and ${at10k} at 10k`);
  });

  it('the SLA/TTL tick reads only what is due: none at 1k or 10k open, then the 3 past their SLA', async (t) => {
    const chasing: number[] = [];
    for (const open of [1000, 10_000]) {
      const clock = { t: Date.now() };
      const w = await world(open, () => clock.t);
      const ticks = async (n: number, stepMs: number) => {
        for (let i = 0; i < n; i++) {
          clock.t += stepMs;
          await w.hub.tick();
        }
      };
      const carol = { identity: 'carol', session: 'due', node: 'cost' };
      /** Sends carol → bob and waits for its push: what the hub pushed to bob before has arrived. */
      const marker = async (body: string) => {
        const { message_id } = await w.hub.send(carol, { to: ['bob'], body });
        await waitFor(() => w.bob.pushes.some((p) => p.meta.message_id === message_id), 10_000, body);
      };
      await marker('after the replay');
      await ticks(5, 1000); // ticks run, nothing is due
      await w.reset();
      await ticks(5, 1000);
      assert.equal(w.reads(), 0, `idle ticks read ${w.reads()} open messages at ${open} open`);
      const pushes = w.bob.pushes.length;
      await w.reset();
      for (let i = 0; i < 3; i++) await w.hub.send(carol, { to: ['bob'], body: `due soon ${i}`, slaMs: 50 });
      await ticks(10, 20); // 200 ms past the sends, a tick every 20 ms
      await w.bob.waitForPushes(pushes + 6); // 3 live pushes, then 3 chases
      await marker('after the chases'); // a second chase would come before it
      await w.hub.remember(`settled-${open}`); // the chases' push records applied
      chasing.push(w.reads());
      const chases = w.bob.pushes.slice(pushes).filter((p) => p.meta.chase === 'true');
      assert.equal(chases.length, 3, 'one chase per overdue handoff');
      assert.equal(w.bob.pushes.length, pushes + 7, 'the sends, their chases and the marker');
    }
    const [at1k, at10k] = chasing;
    t.diagnostic(`3 sends, their chases and a marker: ${at1k} open messages read at 1k open, ${at10k} at 10k`);
    // Each event reads the few messages it touches; a scan of the open set would read ≥ 1000.
    assert.ok(
      at1k < 200 && at10k <= at1k + 2,
      `3 sends and the ticks that chased them read ${at1k} open messages at 1k open and ${at10k} at 10k`,
    );
  });
});

// The editor's snapshot kept current by changes keyed by message id: after any run of sends,
// receipts, chases, resolutions, timer events and archiving, the copy built from the changes shows
// exactly what a fresh snapshot shows; a change carries the rows it touched, not the open mail.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LiveSnapshot } from '../../extension/client/liveSnapshot';
import { Hub } from '../../extension/hub/hub';
import { SNAPSHOT_CAP, type Snapshot } from '../../extension/protocol/views';
import { tempDir } from '../helpers/hubProcess';

/** What the views read from a snapshot (the clock aside). */
function shown(s: Snapshot) {
  return {
    messages: s.messages.map((e) => JSON.stringify(e)),
    pending: s.pending.map((e) => JSON.stringify(e)),
    counts: [s.openCount, s.pendingCount, s.awaitingAckCount, s.overdue.count],
  };
}

/** A hub whose changes are applied to a LiveSnapshot as the control server would send them. */
async function world(clock: () => number) {
  const hub = new Hub({ workspace: tempDir('live-ws'), storeDir: tempDir('live-store'), node: 'n', clock, tickMs: 0 });
  await hub.start();
  for (const name of ['alice', 'bob', 'carol']) await hub.remember(name);
  const live = new LiveSnapshot();
  live.reset(hub.snapshot());
  const touched = new Set<string>();
  hub.onChanged((ids) => ids.forEach((id) => touched.add(id)));
  let refetches = 0;
  let changeBytes = 0;
  let since = clock();
  const flush = () => {
    const change = hub.changeOf(touched, since);
    since = change.now;
    touched.clear();
    changeBytes = JSON.stringify(change).length;
    if (!live.apply(change)) {
      refetches++;
      live.reset(hub.snapshot());
    }
  };
  return { hub, live, flush, refetches: () => refetches, changeBytes: () => changeBytes };
}

describe('snapshot changes keyed by message id', () => {
  it('applied changes always show what a fresh snapshot shows', async () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('send' as const),
        from: fc.constantFrom('alice', 'bob'),
        to: fc.constantFrom('bob', 'carol'),
        ack: fc.boolean(),
      }),
      fc.record({
        kind: fc.constantFrom('read' as const, 'ack' as const, 'done' as const, 'chase' as const, 'resolve' as const),
        pick: fc.nat(),
      }),
      fc.record({
        kind: fc.constant('time' as const),
        ms: fc.integer({ min: 1000, max: 400_000 }),
        tick: fc.boolean(),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        let t = 1_800_000_000_000;
        const w = await world(() => t);
        try {
          const ids: { id: string; to: string }[] = [];
          let n = 0;
          for (const o of ops) {
            if (o.kind === 'send') {
              const r = await w.hub.send(
                { identity: o.from, session: `${o.from}-1`, node: 'n' },
                { to: [o.to], body: `job ${n++}`, requiresAck: o.ack, slaMs: 60_000, ttlMs: 300_000 },
              );
              ids.push({ id: r.message_id, to: o.to });
            } else if (o.kind === 'time') {
              t += o.ms; // without a timer run, the next change must still show rows turned overdue
              if (o.tick) await w.hub.tick();
            } else if (ids.length) {
              const { id, to } = ids[o.pick % ids.length];
              const me = { identity: to, session: `${to}-1`, node: 'n' };
              const open = !!w.hub.state.hot[id];
              if (o.kind === 'read' || o.kind === 'ack') await w.hub.receipt(me, id, o.kind).catch(() => undefined);
              else if (o.kind === 'done')
                await w.hub.receipt(me, id, 'result', 'done', 'shipped').catch(() => undefined);
              else if (o.kind === 'chase' && open) await w.hub.chase(id, 'maria');
              else if (o.kind === 'resolve' && open) await w.hub.resolve(id, 'maria', 'by hand');
            }
            w.flush();
            assert.deepEqual(shown(w.live.snapshot!), shown(w.hub.snapshot()));
          }
        } finally {
          await w.hub.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a row turns overdue when its SLA passes, even with no event (it was chased by hand before)', async () => {
    let t = 1_800_000_000_000;
    const w = await world(() => t);
    try {
      const r = await w.hub.send(
        { identity: 'alice', session: 'a', node: 'n' },
        { to: ['bob'], body: 'migrate', slaMs: 60_000 },
      );
      await w.hub.chase(r.message_id, 'maria');
      w.flush();
      t += 61_000;
      await w.hub.tick();
      w.flush();
      assert.equal(w.hub.snapshot().messages[0].overdue, true);
      assert.deepEqual(shown(w.live.snapshot!), shown(w.hub.snapshot()));
    } finally {
      await w.hub.close();
    }
  });

  it("the status bar count is the hub's: an ACKed handoff awaiting its result is not awaiting an ACK", async () => {
    const w = await world(Date.now);
    try {
      const r = await w.hub.send({ identity: 'alice', session: 'a', node: 'n' }, { to: ['bob'], body: 'migrate' });
      await w.hub.receipt({ identity: 'bob', session: 'b', node: 'n' }, r.message_id, 'ack');
      w.flush();
      const s = w.live.snapshot!;
      assert.equal(s.pendingCount, 1, 'still pending: no result yet');
      assert.equal(s.awaitingAckCount, 0);
      assert.equal(s.pending[0].awaitingAck, false);
    } finally {
      await w.hub.close();
    }
  });

  it('messages archived at a checkpoint leave the summary and the open lists (they go with no journal event), into the settled one', async () => {
    const w = await world(Date.now);
    try {
      w.live.reset(await w.hub.fullSnapshot()); // as an editor asks: with the settled window
      const alice = { identity: 'alice', session: 'a', node: 'n' };
      // Resolved handoffs settle; the first checkpoint comes once the journal passes 512 KiB.
      for (let i = 0; w.hub.snapshot().store.archived === 0; i++) {
        const r = await w.hub.send(alice, { to: ['bob'], body: `task ${i} `.padEnd(2000, '.'), insist: true });
        await w.hub.resolve(r.message_id, 'maria');
        w.flush();
      }
      const fresh = w.hub.snapshot();
      assert.equal(fresh.openCount, Object.keys(w.hub.state.hot).length, 'the open count follows archiving');
      assert.ok(
        fresh.messages.every((m) => w.hub.state.hot[m.id]),
        'no archived message is listed',
      );
      assert.deepEqual(shown(w.live.snapshot!), shown(fresh));
      const settled = (s: Snapshot) => (s.settled ?? []).map((e) => e.id);
      assert.ok(settled(fresh).length > 0, 'the archived ones are listed as settled');
      assert.deepEqual(settled(w.live.snapshot!), settled(fresh), 'the same settled rows as a fresh snapshot');
    } finally {
      await w.hub.close();
    }
  });

  it('a change carries the rows it touched: its size does not grow with open mail', async () => {
    const w = await world(Date.now);
    try {
      const alice = { identity: 'alice', session: 'a', node: 'n' };
      const sizes: number[] = [];
      for (const open of [100, 1000]) {
        while (Object.keys(w.hub.state.hot).length < open)
          await w.hub.send(alice, { to: ['bob'], body: `task ${Object.keys(w.hub.state.hot).length}`, insist: true });
        w.flush();
        await w.hub.send(alice, { to: ['carol'], body: `one more at ${open}` });
        w.flush();
        sizes.push(w.changeBytes());
      }
      assert.equal(w.refetches(), 0, 'no full snapshot needed');
      assert.ok(
        sizes[1] < sizes[0] * 1.2,
        `a one-message change at 1000 open (${sizes[1]} B) is about the size of one at 100 open (${sizes[0]} B)`,
      );
      const snapshotBytes = JSON.stringify(w.hub.snapshot()).length;
      assert.ok(
        w.hub.snapshot().messages.length === SNAPSHOT_CAP && w.hub.snapshot().openCount > SNAPSHOT_CAP,
        'the snapshot caps its rows and counts the rest',
      );
      assert.ok(
        sizes[1] * 20 < snapshotBytes,
        `a change (${sizes[1]} B) is far smaller than the snapshot (${snapshotBytes} B)`,
      );
    } finally {
      await w.hub.close();
    }
  });

  it('a link detached (Disconnect Matrix, from any window or the CLI) leaves the views too', async () => {
    const w = await world(Date.now);
    try {
      const status = {
        transport: 'matrix',
        state: 'connected',
        homeserver: 'http://hs',
        userId: '@a:hs',
        room: '!r',
        outbox: 0,
        advisoryReads: {},
        advisoryReadsNote: '',
      } as const;
      w.hub.setLink({
        whereIs: async () => ({ state: 'in_outbox', note: '' }),
        status: () => status,
        close: async () => undefined,
      });
      w.flush();
      assert.equal(w.live.snapshot?.link?.userId, '@a:hs', 'the link shows');
      w.hub.setLink(undefined);
      w.flush();
      assert.equal(w.hub.snapshot().link, undefined);
      assert.equal(
        w.live.snapshot?.link,
        undefined,
        'and is gone from the copy kept by changes, as from a fresh snapshot',
      );
    } finally {
      await w.hub.close();
    }
  });
});

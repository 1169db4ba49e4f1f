// Hundreds of handoffs from one hub to another through a real Synapse, while the homeserver is
// stopped and started again, and each hub is killed with SIGKILL and restarted. Counted at the
// end: every message arrives, none twice, and every ACK makes it back to the sender. Then the
// same in an end-to-end encrypted room, where every hub's device and its keys must also survive
// the kills (and a gap is backfilled as ciphertext).
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import type { HubProcess } from '../helpers/hubProcess';
import {
  api,
  autoAck,
  crashAndReturn,
  countPushes,
  matrixHub,
  matrixSuite,
  snapshot,
  stopAll,
  synapse,
  unique,
  user,
  waitFor,
  waitMatrix,
  waitPeer,
  waitUntil,
  type Synapse,
} from './world';

stream('Matrix: a stream of handoffs through a homeserver outage and kill -9 of both hubs', {
  n: Number(process.env.HANDOFF_MATRIX_STREAM) || 300,
  encrypt: false,
});
stream('Matrix: the same stream in an end-to-end encrypted room', {
  n: Number(process.env.HANDOFF_MATRIX_STREAM_E2EE) || 120,
  encrypt: true,
});

function stream(name: string, { n: N, encrypt }: { n: number; encrypt: boolean }): void {
  matrixSuite(name, () => {
    let hs: Synapse | undefined;
    const hubs: HubProcess[] = [];
    const agents: Agent[] = [];
    const stops: (() => void)[] = [];
    after(async () => {
      stops.forEach((s) => s());
      await stopAll(agents, hubs, hs);
    });

    it(`${N} handoffs: every one arrives, none twice, every ACK returns`, async () => {
      const t0 = Date.now();
      hs = await synapse();
      const tag = unique();
      const a = await user(hs, `a-${tag}`);
      const b = await user(hs, `b-${tag}`);
      const room = `#stream-${tag}:${hs.serverName}`;
      // A short relay wait keeps sends during the outage quick; a small sync window forces backfill.
      let hubA = await matrixHub(hs, { node: 'nodeA', user: a, room, allowed: [b.userId], relayWaitMs: 100, encrypt });
      let hubB = await matrixHub(hs, {
        node: 'nodeB',
        user: b,
        room,
        allowed: [a.userId],
        syncTimelineLimit: 10,
        args: ['--replay-limit', '1000'],
        encrypt,
      });
      hubs.push(hubA, hubB);
      let alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
      let bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
      agents.push(alice, bob);
      stops.push(autoAck(bob));
      await waitPeer(alice, 'bob@nodeB');

      const ids: string[] = [];
      const replies: { i: number; relay: string }[] = [];
      const send = async (i: number) => {
        const r = await alice.ok('send_handoff', { to: 'bob', body: `stream ${tag} #${i}` });
        ids.push(r.message_id);
        replies.push({ i, relay: r.relay.state });
      };
      const q = Math.floor(N / 6);
      let i = 0;

      // 1. Normal traffic.
      for (; i < q; i++) await send(i);

      // 2. The homeserver goes away; sends go on (and say they are only in the outbox). Hub A is
      //    killed with entries still in its outbox and restarted before the homeserver returns.
      await hs.stop();
      const outageFrom = i;
      const phase = (what: string) => console.log(`# ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      phase('homeserver stopped');
      for (; i < 2 * q; i++) await send(i);
      [hubA, alice] = await crashAndReturn(hubA, alice, 'alice-1', hubs, agents);
      for (; i < 3 * q; i++) await send(i);
      const outageTo = i;
      // The restarted hub A has met the outage itself before the homeserver returns.
      await waitMatrix(hubA, 'retrying', 30_000);
      await hs.restart();
      phase('homeserver back');

      // 3. Hub B is killed mid-stream and restarted; what reached the homeserver meanwhile is a gap
      //    longer than its sync window (10 events), to be backfilled.
      const outboxEmpty = (what: string) =>
        waitUntil(
          async () => (await snapshot(hubA)).link?.outbox === 0,
          60_000,
          `hub A's outbox to drain ${what}`,
          100,
        );
      for (; i < 4 * q; i++) await send(i);
      await outboxEmpty('before hub B is killed');
      await hubB.kill9();
      phase('hub B killed');
      await bob.close().catch(() => undefined);
      for (; i < 5 * q; i++) await send(i);
      await outboxEmpty('while hub B is down');
      hubB = await hubB.restart();
      hubs.push(hubB);
      bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
      agents.push(bob);
      stops.push(autoAck(bob));
      phase('hub B back');

      // 4. The rest.
      for (; i < N; i++) await send(i);
      assert.equal(ids.length, N);
      phase('all sent');

      const bobs = agents.filter((x) => x.name === 'bob');
      const want = new Set(ids);
      const reached = () =>
        new Set(bobs.flatMap((x) => x.pushes.map((p) => p.meta.message_id)).filter((id) => want.has(id))).size;
      // On a timeout the counts below say what was lost.
      await waitFor(() => reached() === N, 180_000).catch(() => undefined);
      // Every ACK back at the sender: nothing pending that is not acked.
      let pending: any[] = [];
      await waitUntil(
        async () => {
          pending = (await alice.ok('pending')).pending;
          return pending.filter((e) => want.has(e.id)).every((e) => e.recipients[0].state === 'acked');
        },
        120_000,
        'every ACK at the sender',
        200,
      ).catch(() => undefined); // the assertions below say which are not
      const mine = pending.filter((e) => want.has(e.id));
      // A late duplicate would come before a later handoff: hub B pushes in the room's order.
      const later = (await alice.ok('send_handoff', { to: 'bob', body: `stream ${tag} after the rest` })).message_id;
      await waitFor(() => bob.pushes.some((p) => p.meta.message_id === later), 60_000, 'a later handoff');

      const { unflagged, flagged } = countPushes(bobs, want);
      const twice = [...unflagged].filter(([, n]) => n > 1);
      const lost = ids.filter((id) => !bobs.some((x) => x.pushes.some((p) => p.meta.message_id === id)));
      console.log(
        `# matrix stream: ${N} sent, lost ${lost.length}, delivered twice ${twice.length}, flagged replays ${flagged}, ` +
          `acked at sender ${mine.filter((e) => e.recipients[0].state === 'acked').length}/${N}, ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
      assert.deepEqual(lost, [], 'lost');
      assert.deepEqual(twice, [], 'delivered twice');
      assert.equal(mine.length, N, 'every handoff in the sender ledger');
      assert.ok(
        mine.every((e) => e.recipients[0].state === 'acked'),
        `not acked: ${mine
          .filter((e) => e.recipients[0].state !== 'acked')
          .map((e) => e.id)
          .slice(0, 5)}`,
      );
      for (const id of ids.slice(0, 20)) {
        const d = (await alice.ok('get_receipts', { message_id: id })).deliveries[0];
        assert.equal(d.receipts.filter((r: any) => r.kind === 'ack').length, 1, `one ACK receipt for ${id}`);
      }

      // Honest replies: with the homeserver down nothing can be on it.
      for (const r of replies)
        if (r.i >= outageFrom && r.i < outageTo) assert.equal(r.relay, 'in_outbox', `send #${r.i} during the outage`);
      const early = replies.filter((r) => r.i < outageFrom);
      assert.ok(
        early.every((r) => r.relay === 'on_homeserver' || r.relay === 'in_outbox'),
        'before the outage: on the homeserver, or honestly not yet',
      );
      console.log(
        `# replies before the outage: ${early.filter((r) => r.relay === 'on_homeserver').length}/${early.length} on the homeserver within the 100 ms relay wait`,
      );
      await waitMatrix(hubA, 'connected', 10_000);
      assert.match(
        hubB.log(),
        /backfilled [1-9]\d* events that a limited sync skipped/,
        'the gap while hub B was down was backfilled',
      );

      if (encrypt) {
        const e = (await snapshot(hubB)).link!.encryption!;
        console.log(
          `# hub B's device: ${e.waitingForKeys} events waiting for keys, crypto store ${e.storeBytes} bytes`,
        );
        assert.equal(e.undecryptable, 0, 'events given up for want of keys');
        return; // the room holds ciphertext: what follows reads handoffs in the clear
      }
      // The same txnId on every retry: the room holds each handoff once, even though hub A was
      // killed with unsent entries and resent them after its restart.
      const roomId = (await snapshot(hubA)).link!.room!;
      const inRoom = new Map<string, number>();
      let batches = 0;
      let from: string | undefined;
      for (;;) {
        const page = await api(
          hs,
          a.accessToken,
          'GET',
          `/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=500${from ? `&from=${encodeURIComponent(from)}` : ''}`,
        );
        for (const ev of page.chunk) {
          // One handoff per event, or a backlog's run of them in one batch event.
          const ids = [
            ev.content?.['org.handoff.message']?.id,
            ...(ev.content?.['org.handoff.batch'] ?? []).map((x: any) => x?.message?.id),
          ];
          for (const id of ids) if (id) inRoom.set(id, (inRoom.get(id) ?? 0) + 1);
          if (ev.content?.['org.handoff.batch']) batches++;
        }
        if (!page.end || page.chunk.length === 0) break;
        from = page.end;
      }
      assert.equal(ids.filter((id) => inRoom.get(id) === 1).length, N, 'each handoff is in the room exactly once');
      console.log(`# batch events in the room: ${batches}`);
      assert.ok(batches > 0, 'the backlog after the outage went out in batches');
    });
  });
}

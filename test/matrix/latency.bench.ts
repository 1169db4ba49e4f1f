// End-to-end latency of a handoff across a real Synapse on loopback (agent A's send_handoff call
// → hub A → outbox PUT → Synapse → hub B's sync → push to agent B), against a plain
// matrix-js-sdk client-to-client message on the same homeserver in the same run, alternating
// sample by sample so drift hits both alike. Then the outbox draining a backlog built while the
// homeserver was down, batched (the default) and one event per handoff, side by side.
//   node_modules/.bin/node out/test/matrix/latency.bench.js      (after node esbuild.mjs)
import { performance } from 'node:perf_hooks';
import {
  ClientEvent,
  createClient,
  RoomEvent,
  SyncState,
  type MatrixClient,
  type MatrixEvent,
  type Room,
} from 'matrix-js-sdk/lib/matrix.js';
import { logger as sdkLogger } from 'matrix-js-sdk/lib/logger.js';
import { connectAgent } from '../helpers/agent';
import {
  matrixHub,
  snapshot,
  synapse,
  unique,
  user,
  waitFor,
  waitPeer,
  waitUntil,
  type MatrixUser,
  type Synapse,
} from './world';
// The plain-JS harness, bundled by esbuild.
import { synapseAvailable, synapseVenvDir } from './synapse.mjs';

const N = Number(process.env.HANDOFF_LATENCY_SAMPLES) || 50;
const BACKLOG = Number(process.env.HANDOFF_BACKLOG) || 1000;
/** One event per handoff is slow: a smaller backlog gives its rate in reasonable time. */
const BACKLOG_UNBATCHED = Number(process.env.HANDOFF_BACKLOG_UNBATCHED) || 200;
const WARMUP = 5;

function quietSdk(): void {
  const root = sdkLogger as unknown as { methodFactory: (m: string) => (...a: unknown[]) => void; rebuild(): void };
  root.methodFactory = () => () => undefined;
  root.rebuild();
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { n: s.length, median, p90: at(0.9), min: s[0], max: s[s.length - 1] };
}

async function sdkClient(hs: Synapse, u: MatrixUser): Promise<MatrixClient> {
  const client = createClient({ baseUrl: hs.url, userId: u.userId, accessToken: u.accessToken });
  const prepared = new Promise<void>((resolve) =>
    client.on(ClientEvent.Sync, (s) => {
      if (s === SyncState.Prepared) resolve();
    }),
  );
  await client.startClient({ initialSyncLimit: 1 });
  await prepared;
  return client;
}

/**
 * A backlog of `count` handoffs sent while the homeserver is down, then drained: the rate from
 * the first entry on the homeserver to an empty outbox, and to the last push at the recipient.
 */
async function backlog(
  hs: Synapse,
  count: number,
  outboxBatch: number,
): Promise<{ drained: number; delivered: number; lost: number; twice: number }> {
  const tag = unique();
  const [a, b] = await Promise.all(['a', 'b'].map((x) => user(hs, `${x}-${tag}`)));
  const room = `#backlog-${tag}:${hs.serverName}`;
  const hubA = await matrixHub(hs, { node: 'nodeA', user: a, room, allowed: [b.userId], relayWaitMs: 0, outboxBatch });
  const hubB = await matrixHub(hs, { node: 'nodeB', user: b, room, allowed: [a.userId] });
  const alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
  const bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
  try {
    await waitPeer(alice, 'bob@nodeB');
    await hs.stop();
    const ids = new Set<string>();
    for (let i = 0; i < count; i++)
      ids.add(
        (
          await alice.ok('send_handoff', {
            to: 'bob',
            body: `backlog ${tag} #${i}: ${'context '.repeat(20)}`,
            requires_ack: false,
          })
        ).message_id,
      );
    await hs.restart();
    let first = 0;
    let outbox = count;
    const drainedAt = await waitUntil(
      async () => {
        outbox = (await snapshot(hubA)).link?.outbox ?? count;
        const now = performance.now();
        if (!first && outbox < count) first = now;
        return outbox === 0 && now;
      },
      600_000,
      () => `the outbox to drain (${outbox} of ${count} left)`,
      100, // a snapshot of a big backlog costs the hub too
    );
    const got = () => bob.pushes.filter((p) => ids.has(p.meta.message_id));
    // On a timeout the lost count says what is missing.
    await waitFor(() => new Set(got().map((p) => p.meta.message_id)).size >= count, 120_000).catch(() => undefined);
    const deliveredAt = got().length ? got().at(-1)!.at : Date.now();
    const perId = new Map<string, number>();
    for (const p of got()) perId.set(p.meta.message_id, (perId.get(p.meta.message_id) ?? 0) + 1);
    // Push times are wall-clock; `first` is performance.now(): convert through the common origin.
    const firstWall = performance.timeOrigin + first;
    return {
      drained: count / ((drainedAt - first) / 1000),
      delivered: count / ((deliveredAt - firstWall) / 1000),
      lost: count - perId.size,
      twice: [...perId.values()].filter((n) => n > 1).length,
    };
  } finally {
    await alice.close();
    await bob.close();
    await hubA.stop();
    await hubB.stop();
  }
}

async function main(): Promise<void> {
  if (!synapseAvailable()) {
    console.error(
      `*** SKIPPED: the Matrix latency benchmark needs Synapse at ${synapseVenvDir()} — run .ci/setup-synapse.sh ***`,
    );
    process.exitCode = process.env.CI ? 1 : 0;
    return;
  }
  quietSdk();
  const hs = await synapse();
  const tag = unique();
  try {
    const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map((x) => user(hs, `${x}-${tag}`)));

    // Plain SDK pair in its own room.
    const C = await sdkClient(hs, c);
    const D = await sdkClient(hs, d);
    const { room_id: plainRoom } = await C.createRoom({ preset: 'private_chat' as never, invite: [d.userId] });
    await new Promise<void>((resolve) => {
      const check = (room: Room, membership: string) => {
        if (room.roomId === plainRoom && membership === 'invite') resolve();
      };
      if (D.getRoom(plainRoom)?.getMyMembership() === 'invite') resolve();
      D.on(RoomEvent.MyMembership, check);
    });
    await D.joinRoom(plainRoom);
    const seenByD = new Map<string, number>();
    D.on(RoomEvent.Timeline, (ev: MatrixEvent, room: Room | undefined) => {
      if (room?.roomId === plainRoom && ev.getType() === 'm.room.message')
        seenByD.set(ev.getContent().body as string, performance.now());
    });
    const plainSample = async (i: number): Promise<number> => {
      const body = `plain ${tag} ${i}`;
      const t = performance.now();
      await C.sendMessage(plainRoom, { msgtype: 'm.text', body } as never);
      await waitFor(() => seenByD.has(body), 30_000, `${body} at D`); // timed by the event, not by the poll
      return seenByD.get(body)! - t;
    };

    // Two hubs, an agent on each.
    const hubA = await matrixHub(hs, {
      node: 'nodeA',
      user: a,
      room: `#lat-${tag}:${hs.serverName}`,
      allowed: [b.userId],
    });
    const hubB = await matrixHub(hs, {
      node: 'nodeB',
      user: b,
      room: `#lat-${tag}:${hs.serverName}`,
      allowed: [a.userId],
    });
    const alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
    const bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
    await waitPeer(alice, 'bob@nodeB');
    const handoffSample = async (i: number): Promise<number> => {
      const before = bob.pushes.length;
      const t = Date.now();
      const sent = await alice.ok('send_handoff', { to: 'bob', body: `latency ${tag} ${i}`, requires_ack: false });
      await waitFor(() => bob.pushes.length > before, 30_000, `${sent.message_id} at bob`); // timed by the push
      if (bob.pushes[before].meta.message_id !== sent.message_id) throw new Error('pushed out of order');
      return bob.pushes[before].at - t;
    };

    const plain: number[] = [];
    const handoff: number[] = [];
    for (let i = 0; i < WARMUP + N; i++) {
      const p = await plainSample(i);
      const h = await handoffSample(i);
      if (i >= WARMUP) {
        plain.push(p);
        handoff.push(h);
      }
    }
    const P = stats(plain);
    const H = stats(handoff);
    const f = (x: number) => `${x.toFixed(1)} ms`;
    console.log(`Matrix latency on loopback (Synapse, ${N} samples each, alternating, Node ${process.version})`);
    console.log(
      `  plain matrix-js-sdk client → client:   median ${f(P.median)}  p90 ${f(P.p90)}  min ${f(P.min)}  max ${f(P.max)}`,
    );
    console.log(
      `  handoff agent → hub → Synapse → hub → agent: median ${f(H.median)}  p90 ${f(H.p90)}  min ${f(H.min)}  max ${f(H.max)}`,
    );
    console.log(`  ratio of medians (handoff / plain): ${(H.median / P.median).toFixed(2)}`);
    C.stopClient();
    D.stopClient();
    await alice.close();
    await bob.close();
    await hubA.stop();
    await hubB.stop();

    const batched = await backlog(hs, BACKLOG, 100);
    const single = await backlog(hs, BACKLOG_UNBATCHED, 1);
    const r = (x: number) => `${x.toFixed(0)}/s`;
    console.log(
      `Outbox backlog built during a homeserver outage, drained once it is back (rates from the first entry on the homeserver):`,
    );
    console.log(
      `  batched (up to 100 per event), ${BACKLOG} handoffs:   to the homeserver ${r(batched.drained)}  pushed at the recipient ${r(batched.delivered)}  lost ${batched.lost}  twice ${batched.twice}`,
    );
    console.log(
      `  one event per handoff, ${BACKLOG_UNBATCHED} handoffs:       to the homeserver ${r(single.drained)}  pushed at the recipient ${r(single.delivered)}  lost ${single.lost}  twice ${single.twice}`,
    );
    console.log(
      `  ratio (batched / one per event), to the recipient: ${(batched.delivered / single.delivered).toFixed(1)}`,
    );
  } finally {
    await hs.stop();
  }
}

// Exits explicitly: the SDK's stopped clients leave a timer that holds the process ~2 minutes.
main().then(
  () => process.exit(process.exitCode ?? 0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

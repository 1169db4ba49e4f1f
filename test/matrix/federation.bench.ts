// Across organisations, measured: two Synapse servers federating on loopback.
//  1. A handoff's latency (send → push at the recipient) between hubs on two federated servers,
//     against two hubs on one server, each in a plain and in an end-to-end encrypted room,
//     samples alternating in the same run.
//  2. How it scales: 2, 4 and 8 hubs, half on each server, all in one room, with the same total
//     traffic (a ring: hub i sends to hub i+1). Every hub syncs the whole room, so each hub's CPU
//     is read from /proc before and after the traffic, with its RSS at the end.
//  3. The remedy, rooms per pair: 8 hubs, the same traffic between fixed pairs (hub 2k ⇄ hub 2k+1),
//     once all in one room and once with each pair in a room of its own, rounds alternating.
//   node_modules/.bin/node out/test/matrix/federation.bench.js [--only=pairs]   (after node esbuild.mjs)
import { readFileSync } from 'node:fs';
import { connectAgent, type Agent } from '../helpers/agent';
import { tempDir, type HubProcess } from '../helpers/hubProcess';
import { matrixHub, unique, user, waitFor, waitPeer, type MatrixUser, type Synapse } from './world';
// The plain-JS harness, bundled by esbuild.
import { startSynapse, synapseAvailable, synapseVenvDir } from './synapse.mjs';

const SAMPLES = Number(process.env.HANDOFF_FED_SAMPLES) || 30;
const TRAFFIC = Number(process.env.HANDOFF_FED_TRAFFIC) || 160;
const WARMUP = 3;
const onlyPairs = process.argv.includes('--only=pairs');
const TICK = 100; // clock ticks per second of /proc/<pid>/stat on Linux

const federating = () => startSynapse({ dir: tempDir('synapse-fed'), federation: true }) as Promise<Synapse>;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.9 * xs.length))];

/** CPU seconds (user + system) a process has used so far, and its RSS in MB. */
function usage(pid: number): { cpu: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpu: (Number(f[11]) + Number(f[12])) / TICK, rssMb: rss ? Number(rss[1]) / 1024 : 0 };
}

interface RingShape {
  encrypt: boolean;
  group: (i: number) => number;
  peer: (i: number) => number;
}

interface Ring {
  hubs: HubProcess[];
  agents: Agent[];
  close(): Promise<void>;
}

/**
 * n hubs, accounts spread over the servers in turn. `group(i)`: the room hub i is in (all in one by
 * default), each room on servers[0]; `peer(i)`: a hub i must have learnt before traffic starts.
 */
async function ring(
  servers: Synapse[],
  n: number,
  { encrypt = false, group = () => 0, peer = (i) => (i + 1) % n }: Partial<RingShape> = {},
): Promise<Ring> {
  const tag = unique();
  const home = (i: number) => servers[i % servers.length];
  const users: MatrixUser[] = [];
  for (let i = 0; i < n; i++) users.push(await user(home(i), `h${i}-${tag}`));
  const hubs: HubProcess[] = [];
  const agents: Agent[] = [];
  for (let i = 0; i < n; i++) {
    const room = `#ring-${tag}-${group(i)}:${servers[0].serverName}`;
    const others = users.filter((_, j) => j !== i && group(j) === group(i)).map((u) => u.userId);
    hubs.push(
      await matrixHub(home(i), { node: `n${i}`, user: users[i], room, allowed: others, relayWaitMs: 3000, encrypt }),
    );
    agents.push(await connectAgent({ socket: hubs[i].socket, name: `agent${i}`, session: `agent${i}-1` }));
  }
  for (let i = 0; i < n; i++) await waitPeer(agents[i], `agent${peer(i)}@n${peer(i)}`, 60_000);
  return {
    hubs,
    agents,
    async close() {
      for (const a of agents) await a.close().catch(() => undefined);
      for (const h of hubs) await h.stop().catch(() => undefined);
    },
  };
}

/** One handoff from agent i to agent j: milliseconds from the call to the push. */
async function sample(r: Ring, i: number, j: number, body: string): Promise<number> {
  const to = r.agents[j];
  const before = to.pushes.length;
  const t = Date.now();
  const sent = await r.agents[i].ok('send_handoff', { to: `agent${j}@n${j}`, body, requires_ack: false });
  await waitFor(() => to.pushes.length > before, 60_000, `${sent.message_id} at agent${j}`); // timed by the push
  return to.pushes[before].at - t;
}

async function main(): Promise<void> {
  if (!synapseAvailable()) {
    console.error(`*** SKIPPED: the federation benchmark needs Synapse at ${synapseVenvDir()} ***`);
    process.exitCode = process.env.CI ? 1 : 0;
    return;
  }
  const [hs1, hs2] = await Promise.all([federating(), federating()]);
  try {
    if (onlyPairs) return await roomsPerPair([hs1, hs2]);
    // 1. Latency: one server against two federated ones, plain and encrypted, alternating.
    const rings = [
      { label: 'one server', ring: await ring([hs1], 2) },
      { label: 'two federated servers', ring: await ring([hs1, hs2], 2) },
      { label: 'one server, encrypted room', ring: await ring([hs1], 2, { encrypt: true }) },
      { label: 'two federated servers, encrypted room', ring: await ring([hs1, hs2], 2, { encrypt: true }) },
    ].map((r) => ({ ...r, ms: [] as number[] }));
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      for (const r of rings) {
        const ms = await sample(r.ring, 0, 1, `${r.label} ${i}`);
        if (i >= WARMUP) r.ms.push(ms);
      }
    }
    for (const r of rings) await r.ring.close();
    console.log(`\nHandoff latency, send → push (${SAMPLES} alternating samples each)\n`);
    console.log('| hubs on | median | p90 | × one server |');
    console.log('|---|---|---|---|');
    for (const r of rings)
      console.log(
        `| ${r.label} | ${median(r.ms)} ms | ${p90(r.ms)} ms | ${(median(r.ms) / median(rings[0].ms)).toFixed(2)} |`,
      );

    // 2. Scaling: the same total traffic through a room of 2, 4 and 8 hubs.
    console.log(`\nOne room, ${TRAFFIC} handoffs in a ring, hubs split over the two servers\n`);
    console.log('| hubs | latency median | p90 | CPU per hub | CPU, all hubs | RSS per hub | CPU per hub × 2 hubs |');
    console.log('|---|---|---|---|---|---|---|');
    let base = 0;
    for (const n of [2, 4, 8]) {
      const r = await ring([hs1, hs2], n);
      const before = r.hubs.map((h) => usage(h.proc.pid!).cpu);
      const lat: number[] = [];
      for (let k = 0; k < TRAFFIC; k++) lat.push(await sample(r, k % n, (k + 1) % n, `ring ${n} #${k}`));
      const after = r.hubs.map((h) => usage(h.proc.pid!));
      const cpu = after.map((u, i) => u.cpu - before[i]);
      const perHub = cpu.reduce((a, b) => a + b, 0) / n;
      const rss = after.reduce((a, u) => a + u.rssMb, 0) / n;
      if (!base) base = perHub;
      console.log(
        `| ${n} | ${median(lat)} ms | ${p90(lat)} ms | ${perHub.toFixed(2)} s | ${(perHub * n).toFixed(2)} s | ${rss.toFixed(0)} MB | ${(perHub / base).toFixed(2)} |`,
      );
      await r.close();
    }

    // 3. The remedy: the same pair traffic in one shared room and in a room per pair.
    await roomsPerPair([hs1, hs2]);
  } finally {
    await Promise.all([hs1.stop(), hs2.stop()]);
  }
}

/** Hubs i and i^1 talk; `rooms per pair` puts each pair in a room of its own. */
async function roomsPerPair(servers: Synapse[]): Promise<void> {
  const n = 8;
  const rounds = 2;
  const peer = (i: number) => i ^ 1;
  const layouts = [
    { label: 'one room for all 8', shape: { peer } },
    { label: 'a room per pair (4 rooms)', shape: { peer, group: (i: number) => i >> 1 } },
  ].map((l) => ({ ...l, cpu: [] as number[], lat: [] as number[], rss: [] as number[] }));
  for (let round = 0; round < rounds; round++)
    for (const l of layouts) {
      const r = await ring(servers, n, l.shape);
      const before = r.hubs.map((h) => usage(h.proc.pid!).cpu);
      for (let k = 0; k < TRAFFIC / rounds; k++) l.lat.push(await sample(r, k % n, peer(k % n), `${l.label} #${k}`));
      const after = r.hubs.map((h) => usage(h.proc.pid!));
      l.cpu.push(after.reduce((a, u, i) => a + u.cpu - before[i], 0) / n);
      l.rss.push(after.reduce((a, u) => a + u.rssMb, 0) / n);
      await r.close();
    }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  console.log(`\n8 hubs, ${TRAFFIC} handoffs between fixed pairs (hub 2k ⇄ 2k+1), ${rounds} alternating rounds\n`);
  console.log('| rooms | latency median | p90 | CPU per hub | RSS per hub | CPU per hub ÷ one room |');
  console.log('|---|---|---|---|---|---|');
  for (const l of layouts)
    console.log(
      `| ${l.label} | ${median(l.lat)} ms | ${p90(l.lat)} ms | ${sum(l.cpu).toFixed(2)} s | ${median(l.rss).toFixed(0)} MB | ${(sum(l.cpu) / sum(layouts[0].cpu)).toFixed(2)} |`,
    );
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});

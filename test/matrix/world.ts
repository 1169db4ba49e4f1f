// A real Synapse and real hubs (dist/hub.js with --matrix-config) for the Matrix suites. Skips
// loudly when Synapse is not installed; under CI=true a missing Synapse fails instead.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, SnapshotRequest } from '../../extension/protocol/control';
import type { Snapshot } from '../../extension/protocol/views';
import { connectControl } from '../../extension/shared/controlClient';
import { connectAgent, type Agent } from '../helpers/agent';
import { waitFor, waitUntil } from '../helpers/wait';
import { startHub, tempDir, type HubProcess } from '../helpers/hubProcess';
// The plain-JS harness (test/matrix/synapse.mjs), bundled into this test by esbuild.
import { startSynapse, type StartedSynapse } from './synapse.mjs';
import { describeNeeds, synapseMissing } from '../helpers/tools.mjs';

/** A running homeserver: the harness's own type, declared in synapse.d.mts. */
export type Synapse = StartedSynapse;

export interface MatrixUser {
  userId: string;
  accessToken: string;
  password: string;
}

/** describe() when Synapse is installed; otherwise a test that skips saying why, out loud (fails under CI=true). */
export function matrixSuite(name: string, body: () => void): void {
  describeNeeds(synapseMissing(), name, body);
}

export async function synapse(opts: { defaultMessageRateLimit?: boolean } = {}): Promise<Synapse> {
  return startSynapse({ dir: tempDir('synapse'), ...opts }) as Promise<Synapse>;
}

export const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

export async function user(hs: Synapse, name: string): Promise<MatrixUser> {
  const password = `pw-${name}`;
  const u = await hs.registerUser(name, password);
  return { userId: u.userId, accessToken: u.accessToken, password };
}

/** Another device of the same account: its own access token. */
export async function login(hs: Synapse, u: MatrixUser): Promise<MatrixUser> {
  const res = await fetch(`${hs.url}/_matrix/client/v3/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'm.login.password',
      identifier: { type: 'm.id.user', user: u.userId },
      password: u.password,
    }),
  });
  const body = (await res.json()) as { access_token: string };
  if (!res.ok) throw new Error(`login ${u.userId}: ${res.status} ${JSON.stringify(body)}`);
  return { ...u, accessToken: body.access_token };
}

export interface MatrixHubSpec {
  node: string;
  user: MatrixUser;
  room: string;
  allowed: string[];
  syncTimelineLimit?: number;
  relayWaitMs?: number;
  args?: string[];
  /** Node → Matrix user fixed in the config (several nodes on one account need it). */
  nodes?: Record<string, string>;
  people?: string[];
  outboxBatch?: number;
  /** Create the room end-to-end encrypted. */
  encrypt?: boolean;
  /** The link state to wait for (default connected). */
  state?: string;
  /** Start on this (stopped) hub's workspace, store and socket, with the new config. */
  restartOf?: HubProcess;
}

/** A hub process with Matrix configured; the token sits in a 0600 file, never on the command line. */
export async function matrixHub(hs: Synapse, spec: MatrixHubSpec): Promise<HubProcess> {
  const dir = tempDir(`cfg-${spec.node}`);
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, spec.user.accessToken, { mode: 0o600 });
  const config = join(dir, 'matrix.json');
  writeFileSync(
    config,
    JSON.stringify({
      homeserver: hs.url,
      room: spec.room,
      allowedSenders: spec.allowed,
      accessTokenFile: tokenFile,
      syncTimelineLimit: spec.syncTimelineLimit,
      nodes: spec.nodes,
      people: spec.people,
      outboxBatch: spec.outboxBatch,
      encrypt: spec.encrypt,
    }),
  );
  const on = spec.restartOf
    ? { workspace: spec.restartOf.workspace, store: spec.restartOf.store, socket: spec.restartOf.socket }
    : {};
  const hub = await startHub({
    ...on,
    args: [
      '--node',
      spec.node,
      '--matrix-config',
      config,
      '--relay-wait-ms',
      String(spec.relayWaitMs ?? 2000),
      ...(spec.args ?? []),
    ],
  });
  await waitMatrix(hub, spec.state ?? 'connected', 30_000);
  return hub;
}

export async function snapshot(hub: HubProcess): Promise<Snapshot> {
  const c = await connectControl(hub.socket, 'test');
  try {
    return await call(c.connection, SnapshotRequest);
  } finally {
    c.close();
  }
}

export async function waitMatrix(hub: HubProcess, state: string, timeoutMs: number): Promise<void> {
  let last: Snapshot['link'];
  await waitUntil(
    async () => {
      last = (await snapshot(hub)).link;
      return last?.state === state;
    },
    timeoutMs,
    () => `Matrix state ${state}: ${JSON.stringify(last)}\n${hub.log()}`,
    100,
  );
}

/** Waits until the agent's hub knows a (remote) identity: its node announced it. */
export async function waitPeer(agent: Agent, identity: string, timeoutMs = 15_000): Promise<void> {
  let peers: string[] = [];
  await waitUntil(
    async () => {
      peers = (await agent.ok('list_peers')).peers.map((p: { identity: string }) => p.identity);
      return peers.includes(identity);
    },
    timeoutMs,
    () => `${agent.name} to learn ${identity}; peers: ${peers.join(', ')}`,
  );
}

/** Raw client-server API as a person's client would call it. */
export async function api(hs: Synapse, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${hs.url}/_matrix/client/v3${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Pushes per message id, split into first pushes and flagged replays/chases. */
export function countPushes(agents: Agent[], ids?: Set<string>): { unflagged: Map<string, number>; flagged: number } {
  const unflagged = new Map<string, number>();
  let flagged = 0;
  for (const a of agents) {
    for (const p of a.pushes) {
      const id = p.meta.message_id;
      if (!id || (ids && !ids.has(id))) continue;
      if (p.meta.replayed === 'true' || p.meta.chase === 'true') flagged++;
      else unflagged.set(id, (unflagged.get(id) ?? 0) + 1);
    }
  }
  return { unflagged, flagged };
}

/**
 * Acks every handoff pushed to the agent, as a diligent agent would. Acks that fail (its hub was
 * killed) are left: the message stays unacked and is replayed after the restart.
 */
export function autoAck(agent: Agent): () => void {
  const done = new Set<string>();
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      for (const p of agent.pushes) {
        const id = p.meta.message_id;
        if (!id || done.has(id)) continue;
        const r = await agent.call('ack', { message_id: id }).catch(() => undefined);
        if (!r || r.isError) break;
        done.add(id);
      }
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), 20);
  return () => clearInterval(timer);
}

export { waitFor, waitUntil };

/**
 * kill -9 of a hub under its connected agent, then both back: the hub restarted on its store, the
 * agent reconnected on the same session. The new ones join `hubs` and `agents` (stopAll stops them).
 */
export async function crashAndReturn(
  hub: HubProcess,
  agent: Agent,
  session: string,
  hubs: HubProcess[],
  agents: Agent[],
): Promise<[HubProcess, Agent]> {
  await hub.kill9();
  await agent.close().catch(() => undefined);
  const next = await hub.restart();
  hubs.push(next);
  const back = await connectAgent({ socket: next.socket, name: agent.name, session });
  agents.push(back);
  return [next, back];
}

/** What a suite started, stopped: its agents, its hubs, then the homeserver. */
export async function stopAll(agents: Agent[], hubs: HubProcess[], hs: Synapse | undefined): Promise<void> {
  for (const a of agents) await a.close().catch(() => undefined);
  for (const h of hubs) await h.stop().catch(() => undefined);
  await hs?.stop();
}

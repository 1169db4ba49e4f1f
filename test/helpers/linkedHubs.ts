// Two real hubs for two repositories on this machine, linked (or not yet) through the real CLI,
// and what the tests read of them: each hub's links as its snapshot says.
import { execFile } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectControl } from '../../extension/shared/controlClient';
import { LinksRequest, SnapshotRequest, call } from '../../extension/protocol/control';
import type { LinksView } from '../../extension/protocol/link';
import type { Snapshot } from '../../extension/protocol/views';
import { DIST, NODE, startHub, tempDir, type HubProcess } from './hubProcess';
import { waitUntil } from './wait';

const run = promisify(execFile);

/** A hub for a fresh folder named `name` (its default short name). */
export async function repoHub(name: string, env?: Record<string, string>): Promise<HubProcess> {
  const base = realpathSync(tempDir(`repo-${name}`));
  const workspace = join(base, name);
  mkdirSync(workspace, { recursive: true });
  return startHub({ workspace, store: join(base, 'store'), socket: join(base, 'run', 'hub.sock'), env });
}

/** `handoff ARGS…` run against a hub, as a person types it; its stdout. */
export async function handoff(hub: Pick<HubProcess, 'socket'>, ...args: string[]): Promise<string> {
  const { stdout } = await run(NODE, [join(DIST, 'cli.js'), ...args, '--hub', hub.socket], {
    env: { ...process.env, HANDOFF_HUB: '' },
  });
  return stdout;
}

export async function linksOf(hub: HubProcess): Promise<LinksView> {
  const c = await connectControl(hub.socket);
  try {
    return await call(c.connection, LinksRequest, {});
  } finally {
    c.close();
  }
}

export async function snapshotOf(hub: HubProcess): Promise<Snapshot> {
  const c = await connectControl(hub.socket);
  try {
    return await call(c.connection, SnapshotRequest);
  } finally {
    c.close();
  }
}

/** Until `hub`'s link to `root` is in `state` (and, for linked, knows `peer` if given). */
export function linkState(hub: HubProcess, root: string, state: string, peer?: string): Promise<LinksView> {
  return waitUntil(
    async () => {
      const v = await linksOf(hub);
      const l = v.links.find((x) => x.root === root);
      return l?.state === state && (!peer || l.peers.some((p) => p.name === peer)) ? v : undefined;
    },
    30_000,
    `the link to ${root} to be ${state}${peer ? ` with ${peer}` : ''}`,
  );
}

/** Links the two both ways with the real CLI and waits until each sees the other linked. */
export async function linkBoth(a: HubProcess, b: HubProcess): Promise<void> {
  await handoff(a, 'link', b.workspace);
  await handoff(b, 'link', a.workspace);
  await linkState(a, b.workspace, 'linked');
  await linkState(b, a.workspace, 'linked');
}

// The snapshot the editor renders: the newest open handoffs, the pending ledger, coverage, live
// sessions and the links' state, at one instant of the hub's clock.
import { coverage, ledgerEntry, overdue, pendingLedger } from './bus/ledger';
import type { BusState } from './bus/model';
import type { PersonPresence, Snapshot } from '../protocol/views';
import type { RemoteLink } from './remote';
import type { SessionRegistry } from './sessions';

export interface SnapshotInput {
  node: string;
  workspace: string;
  now: number;
  state: BusState;
  store: Snapshot['store'];
  sessions: SessionRegistry;
  remote?: RemoteLink;
  /** Newest open handoffs listed. */
  limit: number;
  people: Snapshot['people'];
  person: (identity: string) => PersonPresence | undefined;
}

export function snapshotOf(i: SnapshotInput): Snapshot {
  const late = overdue(i.state, i.now);
  const events = Object.values(i.state.hot)
    .sort((a, b) => b.message.seq - a.message.seq)
    .slice(0, i.limit)
    .map((h) => ledgerEntry(h, i.now));
  return {
    node: i.node,
    workspace: i.workspace,
    now: i.now,
    store: i.store,
    sessions: i.sessions.all().map((s) => ({ key: s.key, identity: s.identity, roles: s.roles, client: s.client, connectedAt: s.connectedAt, lastSeen: s.lastSeen })),
    coverage: coverage(i.state, (identity) => i.sessions.count(identity), i.now, i.person),
    ledger: pendingLedger(i.state, i.now),
    overdue: { count: late.count, oldestSentAt: late.oldestSentAt, ids: late.items.map((x) => x.id) },
    events,
    people: i.people,
    ...(i.remote ? { remote: i.remote.status() } : {}),
  };
}

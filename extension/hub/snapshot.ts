// What the editor renders: a snapshot on request (the newest open handoffs and the oldest pending
// ones, each list capped, with counts), then changes keyed by message id. Both at one instant of
// the hub's clock; the cost of a change is the rows it touched, not the open mail.
import { coverage, isAwaitingAck, isPending, ledgerEntry, overdue, personInbox, slaPassed } from './bus/ledger';
import type { MailIndex } from './bus/mailIndex';
import type { BusState, HotMessage } from './bus/model';
import { SNAPSHOT_CAP, type BusSummary, type PersonPresence, type PersonView, type Snapshot, type SnapshotChange } from '../protocol/views';
import type { People } from './people';
import type { RemoteLink } from './remote';
import type { SessionRegistry } from './sessions';

export interface SnapshotInput {
  node: string;
  workspace: string;
  now: number;
  state: BusState;
  store: Snapshot['store'];
  sessions: SessionRegistry;
  link?: RemoteLink;
  /** The people at this hub's windows, with their inboxes. */
  people: Snapshot['people'];
  person: (identity: string) => PersonPresence | undefined;
}

/** Each person at a window on this hub, with their inbox: the snapshot carries it to every window. */
export function peopleViews(people: People, mail: MailIndex, state: BusState, now: number): PersonView[] {
  return people.identities().map((identity) => {
    const inbox = personInbox(mail.openFor(state, identity), identity);
    return { identity, presence: people.presence(identity, now)!, notifier: people.notifier(identity), unread: inbox.filter((i) => i.unread).length, inbox };
  });
}

function summary(i: SnapshotInput, open: HotMessage[]): BusSummary {
  let pendingCount = 0;
  let awaitingAckCount = 0;
  for (const h of open) {
    if (isPending(h)) pendingCount++;
    if (isAwaitingAck(h)) awaitingAckCount++;
  }
  return {
    now: i.now,
    store: i.store,
    sessions: i.sessions.all().map((s) => ({ key: s.key, identity: s.identity, roles: s.roles, client: s.client, connectedAt: s.connectedAt, lastSeen: s.lastSeen })),
    coverage: coverage(i.state, (identity) => i.sessions.count(identity), i.now, i.person),
    overdue: overdue(i.state, i.now, SNAPSHOT_CAP),
    openCount: open.length,
    pendingCount,
    awaitingAckCount,
    people: i.people,
    ...(i.link ? { link: i.link.status() } : {}),
  };
}

export function snapshotOf(i: SnapshotInput): Snapshot {
  const open = Object.values(i.state.hot);
  const bySeq = [...open].sort((a, b) => b.message.seq - a.message.seq);
  const pending = open.filter(isPending).sort((a, b) => a.message.sentAt - b.message.sentAt || a.message.seq - b.message.seq);
  return {
    node: i.node,
    workspace: i.workspace,
    ...summary(i, open),
    messages: bySeq.slice(0, SNAPSHOT_CAP).map((h) => ledgerEntry(h, i.now)),
    pending: pending.slice(0, SNAPSHOT_CAP).map((h) => ledgerEntry(h, i.now)),
  };
}

/**
 * The rows of the given messages, plus those whose SLA passed since `since` (their overdue flag
 * changed with no event): a change's rows always agree with its summary.
 */
export function changeOf(i: SnapshotInput, ids: Iterable<string>, since: number): SnapshotChange {
  const upserts = [];
  const removed = [];
  for (const id of new Set([...ids, ...slaPassed(i.state, since, i.now)])) {
    const hot = i.state.hot[id];
    if (hot) upserts.push(ledgerEntry(hot, i.now));
    else removed.push(id);
  }
  return { ...summary(i, Object.values(i.state.hot)), upserts, removed };
}

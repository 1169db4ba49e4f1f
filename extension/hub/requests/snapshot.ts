// What the editor renders: a snapshot on request (the newest open handoffs and the oldest pending
// ones, each list capped, with counts), then changes keyed by message id. Both at one instant of
// the hub's clock; the cost of a change is the rows it touched, not the open mail: its summary
// comes from the LedgerIndex the journal keeps current, and so do the snapshot's capped lists.
import { coverage, ledgerEntry, PERSON_INBOX, personInbox } from '../bus/ledger';
import type { WakeMode } from '../../protocol/wake';
import type { LedgerIndex } from '../bus/ledgerIndex';
import type { MailIndex } from '../bus/mailIndex';
import type { BusState, HotMessage } from '../bus/model';
import {
  SNAPSHOT_CAP,
  type BusSummary,
  type PersonPresence,
  type PersonView,
  type Snapshot,
  type SnapshotChange,
} from '../../protocol/views';
import type { People } from '../presence/people';
import type { RemoteLink } from '../remote';
import type { LinksView } from '../../protocol/link';
import { sessionLabel, type SessionRegistry } from '../presence/sessions';

export interface SnapshotInput {
  node: string;
  workspace: string;
  now: number;
  state: BusState;
  ledger: LedgerIndex;
  /** The handoffs settled last, newest sent first (settledWindow.ts). */
  settled: readonly HotMessage[];
  store: Snapshot['store'];
  sessions: SessionRegistry;
  link?: RemoteLink;
  links?: LinksView;
  /** The people at this hub's windows, with their inboxes. */
  people: Snapshot['people'];
  person: (identity: string) => PersonPresence | undefined;
  wakeIdleAgents: WakeMode;
  /** What this machine's hub promises less than Linux does (shared/platform/powers.ts). */
  weaker: string[];
}

/** Each person at a window on this hub, with their inbox (the newest PERSON_INBOX): the snapshot carries it to every window. */
export function peopleViews(people: People, mail: MailIndex, state: BusState, now: number): PersonView[] {
  return people.identities().map((identity) => {
    const inbox = personInbox(mail.newestFor(state, identity, PERSON_INBOX), identity);
    return {
      identity,
      presence: people.presence(identity, now)!,
      notifier: people.notifier(identity),
      unread: mail.unreadCount(identity),
      inbox,
    };
  });
}

function summary(i: SnapshotInput): BusSummary {
  const counts = i.ledger.counts();
  return {
    now: i.now,
    store: i.store,
    sessions: i.sessions.all().map((s) => ({
      label: sessionLabel(s.key),
      identity: s.identity,
      roles: s.roles,
      client: s.client,
      connectedAt: s.connectedAt,
      lastSeen: s.lastSeen,
    })),
    coverage: coverage(
      i.state,
      (identity) => i.sessions.count(identity),
      i.now,
      i.person,
      (identity) => i.ledger.unacked(identity),
    ),
    overdue: i.ledger.overdue(i.state, i.now, SNAPSHOT_CAP),
    openCount: counts.open,
    pendingCount: counts.pending,
    awaitingAckCount: counts.awaitingAck,
    people: i.people,
    wakeIdleAgents: i.wakeIdleAgents,
    ...(i.link ? { link: i.link.status() } : {}),
    ...(i.links ? { links: i.links } : {}),
  };
}

export function snapshotOf(i: SnapshotInput): Snapshot {
  const rows = (ids: string[]) => ids.map((id) => ledgerEntry(i.state.hot[id], i.now));
  return {
    node: i.node,
    workspace: i.workspace,
    ...summary(i),
    ...(i.weaker.length ? { weaker: i.weaker } : {}),
    messages: rows(i.ledger.newest(SNAPSHOT_CAP)),
    pending: rows(i.ledger.oldestPending(SNAPSHOT_CAP)),
    // One still hot (archived, then back by a late receipt) is listed as open, not twice.
    settled: i.settled.filter((h) => !i.state.hot[h.message.id]).map((h) => ledgerEntry(h, i.now)),
  };
}

/**
 * The rows of the given messages, plus those whose SLA passed since `since` (their overdue flag
 * changed with no event): a change's rows always agree with its summary.
 */
export function changeOf(i: SnapshotInput, ids: Iterable<string>, since: number): SnapshotChange {
  const upserts = [];
  const removed = [];
  for (const id of new Set([...ids, ...i.ledger.slaPassed(since, i.now)])) {
    const hot = i.state.hot[id];
    if (hot) upserts.push(ledgerEntry(hot, i.now));
    else removed.push(id);
  }
  return { ...summary(i), upserts, removed };
}

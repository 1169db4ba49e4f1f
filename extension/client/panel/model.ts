// What the sidebar shows, derived from the hub's snapshot. Plain functions over data: the
// webview only renders this (as text), and tests read the same model the view renders.
import { CHANNEL_WORDS } from '../../protocol/model';
import type { LedgerEntry, LedgerRecipient, LinkStatus, Snapshot } from '../../protocol/views';
import { age, clock, plural } from '../../shared/format';
import { deviceLines, encryptionLine } from '../../shared/encryptionText';
import type { HubState } from '../hubSupervisor';
import { sharedHubLine } from '../sharedHubText';
import {
  advisoryReadsLabel,
  droppedLabel,
  lastSyncLabel,
  outboxLabel,
  linkHeadline,
  linkLook,
} from '../matrix/linkText';
import type {
  CoverageView,
  EventView,
  InboxRowView,
  MatrixView,
  PanelFilter,
  PanelModel,
  RecipientView,
  Tone,
} from '../../protocol/panel';
import type { PersonInboxItem } from '../../protocol/views';
import { personView } from '../person/inbox';
import { linksModel } from './links';

const STATE_LOOK: Record<LedgerRecipient['state'], { icon: string; tone: Tone; word: string }> = {
  queued: { icon: 'inbox', tone: 'muted', word: 'queued' },
  pushed: { icon: 'arrow-right', tone: 'info', word: 'pushed' },
  surfaced: { icon: 'lightbulb', tone: 'info', word: 'surfaced' },
  read: { icon: 'eye', tone: 'info', word: 'read' },
  acked: { icon: 'check', tone: 'ok', word: 'ACK' },
  done: { icon: 'pass-filled', tone: 'ok', word: 'done' },
  stuck: { icon: 'debug-pause', tone: 'warn', word: 'stuck' },
  failed: { icon: 'error', tone: 'error', word: 'failed' },
};

/** Where a wake was typed, for the row: tmux (the pane is in the tooltip), or the editor terminal by name. */
function wakePlace(w: { how: string; terminal: string }): string {
  return w.how === 'terminal' ? `terminal ${w.terminal}` : w.how;
}

export function recipientView(r: LedgerRecipient, people: ReadonlySet<string> = new Set()): RecipientView {
  const look = STATE_LOOK[r.state];
  const receipt = r.lastReceipt;
  let label: string;
  // A person has no MCP session: their handoffs wait in the inbox of their editor.
  // Woken and not yet surfaced: the wake is the latest step, until the hook that runs records surfaced.
  const woken = (r.state === 'queued' || r.state === 'pushed') && r.woken;
  if (woken) label = `woken · ${wakePlace(woken)} ${clock(woken.at)}`;
  else if (r.state === 'queued')
    label = people.has(r.recipient) ? 'in their editor inbox · unread' : 'queued · no live session';
  else if (r.state === 'pushed') label = `pushed · ${plural(r.sessionsPushed, 'session')}`;
  // The CLI is enough for the row (the tooltip names the hook event): the sidebar is narrow.
  else if (r.state === 'surfaced' && r.surfaced)
    label = `surfaced · ${r.surfaced.via.split(' ')[0]} ${clock(r.surfaced.at)}`;
  else if (r.state === 'failed') label = `failed · ${r.failure ?? 'no reason given'}`;
  else if (r.escalated && r.awaitingAck) label = `escalated → ${r.escalated.to} ${clock(r.escalated.at)}`;
  // A receipt written other than from the recipient's own session says so on the row.
  // The row already names the recipient ("bob ACK · bob" said it twice): only another writer is named.
  else if (receipt)
    label = `${look.word}${receipt.by !== r.recipient ? ` · ${receipt.by}` : ''}${receipt.channel && receipt.channel !== 'agent' ? ` via ${receipt.channel}` : ''} · ${clock(receipt.at)}`;
  else label = look.word;
  const lines = [`${r.recipient}: ${look.word}`];
  if (r.sessionsPushed) lines.push(`pushed to ${plural(r.sessionsPushed, 'session')}`);
  if (r.woken)
    lines.push(
      `woken at ${new Date(r.woken.at).toLocaleString()}: a prompt typed into its idle session (${r.woken.how === 'terminal' ? `the editor's integrated terminal "${r.woken.terminal}"` : `${r.woken.how} pane ${r.woken.terminal}`})`,
    );
  if (r.surfaced)
    lines.push(
      `surfaced in the model's context by ${r.surfaced.via} (${r.surfaced.path}), session ${r.surfaced.session}, at ${new Date(r.surfaced.at).toLocaleString()}`,
    );
  if (receipt)
    lines.push(
      `${receipt.kind}${receipt.outcome ? ` (${receipt.outcome})` : ''} by ${receipt.by}, written from ${CHANNEL_WORDS[receipt.channel ?? 'agent']}, session ${receipt.session}, node ${receipt.node}, at ${new Date(receipt.at).toLocaleString()}`,
    );
  if (r.chasedAt) lines.push(`chased at ${clock(r.chasedAt)}`);
  if (r.escalated)
    lines.push(
      `escalated to ${r.escalated.to} at ${new Date(r.escalated.at).toLocaleString()} (handoff ${r.escalated.messageId})`,
    );
  if (r.overdue) lines.push('past its SLA without an ACK');
  return {
    identity: r.recipient,
    state: r.state,
    label,
    detail: lines.join('\n'),
    icon: r.overdue ? 'warning' : woken ? 'bell' : look.icon,
    tone: r.overdue ? 'warn' : look.tone,
    overdue: r.overdue,
    summary: receipt?.summary,
  };
}

function eventView(e: LedgerEntry, remote: LinkStatus | undefined, people: ReadonlySet<string>): EventView {
  const reads = remote?.advisoryReads[e.id];
  return {
    id: e.id,
    from: e.from,
    to: e.recipients.map((r) => r.recipient),
    thread: e.thread,
    preview: e.preview,
    sentAt: e.sentAt,
    dueAt: e.requiresAck ? e.dueAt : undefined,
    overdue: e.overdue,
    deadLettered: e.deadLettered,
    resolved: e.resolved,
    awaitingAck: e.awaitingAck,
    open: e.pending,
    recipients: e.recipients.map((r) => recipientView(r, people)),
    advisoryReads:
      remote && reads?.length
        ? {
            label: `${advisoryReadsLabel(reads)} · m.read, advisory (per Matrix user, not per session)`,
            note: remote.advisoryReadsNote,
          }
        : undefined,
  };
}

function matrixView(r: LinkStatus): MatrixView {
  return {
    state: r.state,
    ...linkLook(r),
    headline: linkHeadline(r),
    homeserver: r.homeserver,
    userId: r.userId,
    room: r.room,
    error: r.error,
    outbox: r.outbox,
    outboxLabel: outboxLabel(r),
    lastSyncAt: r.lastSyncAt,
    lastSyncLabel: lastSyncLabel(r),
    advisoryReadsNote: r.advisoryReadsNote,
    notices: r.notices ?? [],
    droppedLabel: droppedLabel(r),
    encryption: { on: r.encryption?.state === 'on', label: encryptionLine(r), devices: deviceLines(r) },
  };
}

function coverageView(c: Snapshot['coverage'][number]): CoverageView {
  const detail = [
    `${c.identity}: ${c.acked} of ${c.addressed} addressed handoffs acknowledged`,
    c.medianAckMs !== undefined ? `median time to ACK ${age(c.medianAckMs)}` : undefined,
    `${c.liveSessions} live session(s)`,
    c.ghost ? `GHOST: ${c.unacked} unacked and nobody connected` : undefined,
    c.person
      ? `a person at the editor: ${c.person.live ? 'live' : 'away'} (${plural(c.person.windows, 'window')}${c.person.lastFocusedAt ? `, last focused ${new Date(c.person.lastFocusedAt).toLocaleString()}` : ''}; live means focused within the last 5 min)`
      : undefined,
    c.lastSeen ? `last seen ${new Date(c.lastSeen).toLocaleString()}` : undefined,
  ]
    .filter(Boolean)
    .join('\n');
  return {
    identity: c.identity,
    addressed: c.addressed,
    acked: c.acked,
    label: `${c.acked}/${c.addressed} acked`,
    detail,
    liveSessions: c.liveSessions,
    unacked: c.unacked,
    ghost: c.ghost,
    person: c.person && { live: c.person.live, label: c.person.live ? 'live' : 'away' },
  };
}

const INBOX_STATE: Partial<Record<PersonInboxItem['state'], string>> = {
  read: 'read',
  acked: 'ACKed · your result is awaited',
};

/** `linked`: the short names of the repositories linked here, so a handoff from one says where it came from. */
export function inboxRow(i: PersonInboxItem, linked: ReadonlySet<string> = new Set()): InboxRowView {
  const at = i.from.indexOf('@');
  const origin = at < 0 ? undefined : i.from.slice(at + 1);
  const fromLinked = origin !== undefined && linked.has(origin) ? origin : undefined;
  const detail = [
    i.escalation
      ? `Escalation: ${i.escalation.silent} has not acknowledged handoff ${i.escalation.of} from ${i.from}`
      : `From ${i.from}`,
    fromLinked ? `from the linked repository ${fromLinked} on this machine` : undefined,
    `sent ${new Date(i.sentAt).toLocaleString()}${i.requiresAck ? ` · ACK due ${new Date(i.dueAt).toLocaleString()}` : ''}`,
    `thread ${i.thread}${i.replyTo ? ` · reply to ${i.replyTo}` : ''}`,
    `id ${i.id}`,
  ]
    .filter(Boolean)
    .join('\n');
  return {
    id: i.id,
    from: i.from,
    headline: i.escalation ? `Escalation · ${i.escalation.silent} silent` : i.from,
    preview: i.preview,
    sentAt: i.sentAt,
    state: i.state,
    unread: i.unread,
    stateLabel: i.unread ? 'unread' : (INBOX_STATE[i.state] ?? i.state),
    canAck: i.state !== 'acked',
    escalation: i.escalation,
    origin: fromLinked,
    detail,
  };
}

/** The Events list: the open handoffs and the ones settled last (from history), newest first, each once. */
function listed(snapshot: Snapshot | undefined): LedgerEntry[] {
  if (!snapshot) return [];
  const open = new Set(snapshot.messages.map((e) => e.id));
  const settled = (snapshot.settled ?? []).filter((e) => !open.has(e.id));
  return settled.length ? [...snapshot.messages, ...settled].sort((a, b) => b.seq - a.seq) : snapshot.messages;
}

function hubView(state: HubState, snapshot: Snapshot | undefined): PanelModel['hub'] {
  if (state.kind === 'running') {
    return {
      state: 'running',
      // The person reads what the view is on; the process behind it is for the tooltip and the log.
      detail: state.shared
        ? sharedHubLine(state.pid, state.person !== false, state.headless === true)
        : "Running on this repository's hub",
      tooltip: `hub ${snapshot?.node ?? ''} · pid ${state.pid ?? '?'} (Handoff: Show Log for more)`,
      node: snapshot?.node,
    };
  }
  if (state.kind === 'starting') return { state: 'starting', detail: 'Starting the hub…' };
  return { state: 'down', detail: `${state.reason}${state.restarting ? ' Restarting…' : ''}` };
}

export function panelModel(
  state: HubState,
  snapshot: Snapshot | undefined,
  filter: PanelFilter,
  identity: string,
): PanelModel {
  const remote = snapshot?.link;
  const me = personView(snapshot, identity);
  const people = new Set((snapshot?.people ?? []).map((p) => p.identity));
  const events = listed(snapshot).map((e) => eventView(e, remote, people));
  const overdueIds = new Set(snapshot?.overdue.ids ?? []);
  const coverage = (snapshot?.coverage ?? []).map(coverageView);
  const pending = (snapshot?.pending ?? []).map((e) => eventView(e, remote, people));
  const linkedNames = new Set((snapshot?.links?.links ?? []).flatMap((l) => (l.name ? [l.name] : [])));
  return {
    inbox: {
      identity,
      unread: me?.unread ?? 0,
      // ACK only where the hub takes it from this window.
      rows: (me?.inbox ?? [])
        .map((i) => inboxRow(i, linkedNames))
        .map((r) => ({ ...r, canAck: r.canAck && personActs(state) })),
    },
    hub: hubView(state, snapshot),
    matrix: remote && matrixView(remote),
    store: snapshot && { ok: snapshot.store.ok, error: snapshot.store.error },
    filter,
    now: snapshot?.now ?? Date.now(),
    overdueCount: overdueIds.size,
    events: filter === 'overdue' ? events.filter((e) => overdueIds.has(e.id)) : events,
    pending,
    // "4 waiting for an ACK" was said of four handoffs ACKed and waiting for their result.
    waiting: {
      ack: pending.filter((e) => e.awaitingAck).length,
      result: pending.filter((e) => !e.awaitingAck && !e.deadLettered).length,
    },
    sessions: (snapshot?.sessions ?? []).map((s) => ({
      label: s.label,
      identity: s.identity,
      client: s.client,
      roles: s.roles,
      connectedAt: s.connectedAt,
    })),
    coverage,
    ghosts: coverage.filter((c) => c.ghost),
    links: linksModel(snapshot?.links),
  };
}

const personActs = (state: HubState) => state.kind === 'running' && state.person !== false;

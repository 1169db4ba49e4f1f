// What the status bar item shows, as data: quiet when every handoff is acknowledged, a warning
// when a send has had no recipient ACK past its SLA, an error when the hub is down. Tests assert
// on it; statusBar.ts renders it.
import type { LedgerEntry, Snapshot } from '../protocol/views';
import { age, plural } from '../shared/format';
import type { HubState } from './hubSupervisor';
import { linkBadge, linkTooltip } from './matrix/linkText';
import { unreadCount } from './person/inbox';

export interface StatusView {
  text: string;
  tooltip: string;
  background?: 'warning' | 'error';
  command: string;
}

/** What the item shows, as data (tests assert on it, the item renders it). */
export function statusView(state: HubState, s: Snapshot | undefined, now = Date.now(), identity?: string): StatusView {
  const view = withWeaker(withInbox(busView(state, s, now), state, s, identity), state, s);
  if (state.kind !== 'running' || !s?.link) return view;
  // The Matrix link rides along: a mark in the text, its state in the tooltip; refused needs a look.
  const refused = s.link.state === 'refused';
  return {
    text: `${view.text} ${linkBadge(s.link)}`,
    tooltip: `${view.tooltip}\n${linkTooltip(s.link)}`,
    background: view.background ?? (refused ? 'warning' : undefined),
    command: refused && !view.background ? 'handoff.connectMatrix' : view.command,
  };
}

/** What this machine's hub promises less than Linux does (docs/platforms.md) is in the tooltip, always. */
function withWeaker(view: StatusView, state: HubState, s: Snapshot | undefined): StatusView {
  if (state.kind !== 'running' || !s?.weaker?.length) return view;
  return {
    ...view,
    tooltip: `${view.tooltip}\nWeaker here than on Linux:\n${s.weaker.map((w) => `• ${w}`).join('\n')}`,
  };
}

/** The person's unread count rides along; with nothing more urgent, a click opens their inbox. */
function withInbox(view: StatusView, state: HubState, s: Snapshot | undefined, identity?: string): StatusView {
  const unread = identity && state.kind === 'running' ? unreadCount(s, identity) : 0;
  if (!unread) return view;
  return {
    text: `${view.text} $(mail) ${unread}`,
    tooltip: `${view.tooltip}\n${plural(unread, 'unread handoff')} for ${identity}: click to open your inbox`,
    background: view.background,
    command: view.background ? view.command : 'handoff.openInbox',
  };
}

function busView(state: HubState, s: Snapshot | undefined, now: number): StatusView {
  if (state.kind === 'starting')
    return { text: '$(sync~spin) Handoff', tooltip: 'Starting the Handoff hub…', command: 'handoff.showLog' };
  if (state.kind === 'down') {
    return {
      text: '$(error) Handoff: hub down',
      tooltip: `${state.reason}${state.restarting ? ' Restarting…' : ' Click to restart it.'}`,
      background: 'error',
      command: state.restarting ? 'handoff.showLog' : 'handoff.restartHub',
    };
  }
  if (!s)
    return {
      text: '$(sync~spin) Handoff',
      tooltip: 'Waiting for the hub’s first snapshot…',
      command: 'handoff.panel.focus',
    };
  if (!s.store.ok)
    return {
      text: '$(error) Handoff: store failing',
      tooltip: s.store.error ?? 'The store cannot be written.',
      background: 'error',
      command: 'handoff.showLog',
    };
  const skew = now - s.now;
  if (s.overdue.count > 0) {
    const late = s.pending.filter((e) => s.overdue.ids.includes(e.id));
    const oldest = s.overdue.oldestSentAt !== undefined ? age(s.now + skew - s.overdue.oldestSentAt) : '';
    return {
      text: `$(warning) ${s.overdue.count} overdue${oldest ? ` · ${oldest}` : ''}`,
      tooltip: [
        `Handoff: ${plural(s.overdue.count, 'handoff')} without a recipient ACK past the SLA`,
        ...late.map((e) => overdueLine(e, s.now + skew)),
      ].join('\n'),
      background: 'warning',
      command: 'handoff.showOverdue',
    };
  }
  // Awaiting a recipient's ACK as the bus decides it: an ACKed handoff waiting for its result is not.
  const waiting = s.awaitingAckCount;
  const live = s.sessions.length;
  if (waiting > 0) {
    return {
      text: `$(clock) Handoff ${waiting}`,
      tooltip: `Handoff: ${plural(waiting, 'handoff')} awaiting ACK, all within their SLA · ${plural(live, 'live session')}`,
      command: 'handoff.panel.focus',
    };
  }
  return {
    text: '$(check-all) Handoff',
    tooltip: `Handoff: everything is acknowledged · ${plural(live, 'live session')}`,
    command: 'handoff.panel.focus',
  };
}

function overdueLine(e: LedgerEntry, now: number): string {
  const who = e.recipients
    .filter((r) => r.overdue || r.state === 'failed')
    .map((r) => `${r.recipient} (${r.state})`)
    .join(', ');
  return `• ${e.from} → ${who}, sent ${age(now - e.sentAt)} ago: ${e.preview}`;
}

// The status bar item: quiet when every handoff is acknowledged, a warning when a send has had no
// recipient ACK past its SLA, an error when the hub is down. It notifies once per item that goes
// overdue — an escalation nobody asked to see every second is noise.
import * as vscode from 'vscode';
import type { LedgerEntry, Snapshot } from '../shared/protocol';
import { age, plural } from './format';
import type { HubState } from './hubSupervisor';
import { remoteBadge, remoteTooltip } from './matrix/remoteText';

export interface StatusView {
  text: string;
  tooltip: string;
  background?: 'warning' | 'error';
  command: string;
}

/** What the item shows, as data (tests assert on it, the item renders it). */
export function statusView(state: HubState, s: Snapshot | undefined, now = Date.now()): StatusView {
  const view = busView(state, s, now);
  if (state.kind !== 'running' || !s?.remote) return view;
  // The Matrix link rides along: a mark in the text, its state in the tooltip; refused needs a look.
  const refused = s.remote.state === 'refused';
  return {
    text: `${view.text} ${remoteBadge(s.remote)}`,
    tooltip: `${view.tooltip}\n${remoteTooltip(s.remote)}`,
    background: view.background ?? (refused ? 'warning' : undefined),
    command: refused && !view.background ? 'handoff.connectMatrix' : view.command,
  };
}

function busView(state: HubState, s: Snapshot | undefined, now: number): StatusView {
  if (state.kind === 'starting') return { text: '$(sync~spin) Handoff', tooltip: 'Starting the Handoff hub…', command: 'handoff.showLog' };
  if (state.kind === 'down') {
    return {
      text: '$(error) Handoff: hub down',
      tooltip: `${state.reason}${state.restarting ? ' Restarting…' : ' Click to restart it.'}`,
      background: 'error',
      command: state.restarting ? 'handoff.showLog' : 'handoff.restartHub',
    };
  }
  if (!s) return { text: '$(sync~spin) Handoff', tooltip: 'Waiting for the hub’s first snapshot…', command: 'handoff.showPanel' };
  if (!s.store.ok) return { text: '$(error) Handoff: store failing', tooltip: s.store.error ?? 'The store cannot be written.', background: 'error', command: 'handoff.showLog' };
  const skew = now - s.now;
  if (s.overdue.count > 0) {
    const late = s.ledger.filter((e) => s.overdue.ids.includes(e.id));
    const oldest = s.overdue.oldestSentAt !== undefined ? age(s.now + skew - s.overdue.oldestSentAt) : '';
    return {
      text: `$(warning) ${s.overdue.count} overdue${oldest ? ` · ${oldest}` : ''}`,
      tooltip: [`Handoff: ${plural(s.overdue.count, 'handoff')} without a recipient ACK past the SLA`, ...late.map((e) => overdueLine(e, s.now + skew))].join('\n'),
      background: 'warning',
      command: 'handoff.showOverdue',
    };
  }
  const waiting = s.ledger.filter((e) => e.requiresAck && !e.resolved).length;
  const live = s.sessions.length;
  if (waiting > 0) {
    return { text: `$(clock) Handoff ${waiting}`, tooltip: `Handoff: ${plural(waiting, 'handoff')} awaiting ACK, all within their SLA · ${plural(live, 'live session')}`, command: 'handoff.showPanel' };
  }
  return { text: '$(check-all) Handoff', tooltip: `Handoff: everything is acknowledged · ${plural(live, 'live session')}`, command: 'handoff.showPanel' };
}

function overdueLine(e: LedgerEntry, now: number): string {
  const who = e.recipients.filter((r) => r.overdue || r.state === 'failed').map((r) => `${r.recipient} (${r.state})`).join(', ');
  return `• ${e.from} → ${who}, sent ${age(now - e.sentAt)} ago: ${e.preview}`;
}

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('handoff.status', vscode.StatusBarAlignment.Left, 50);
  private readonly notified = new Set<string>();
  private timer?: NodeJS.Timeout;
  private view: StatusView = { text: '', tooltip: '', command: '' };

  constructor(
    private readonly state: () => HubState,
    private readonly snapshot: () => Snapshot | undefined,
    private readonly onOverdue: (items: LedgerEntry[]) => void,
  ) {
    this.item.name = 'Handoff';
    this.item.show();
    this.update();
  }

  get current(): StatusView {
    return this.view;
  }

  update(): void {
    const s = this.snapshot();
    this.view = statusView(this.state(), s);
    this.item.text = this.view.text;
    // Plain text: previews are untrusted and must not be rendered as Markdown.
    this.item.tooltip = this.view.tooltip;
    this.item.command = this.view.command;
    this.item.backgroundColor = this.view.background ? new vscode.ThemeColor(`statusBarItem.${this.view.background}Background`) : undefined;
    this.item.accessibilityInformation = { label: this.view.tooltip };
    // The oldest age keeps growing while something is overdue: refresh the text meanwhile.
    const ticking = !!s && s.overdue.count > 0;
    if (ticking && !this.timer) this.timer = setInterval(() => this.update(), 5000);
    if (!ticking && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    if (s) this.notifyNewlyOverdue(s);
  }

  private notifyNewlyOverdue(s: Snapshot): void {
    const fresh = s.ledger.filter((e) => s.overdue.ids.includes(e.id) && !this.notified.has(e.id));
    for (const e of fresh) this.notified.add(e.id);
    // Forget settled items so the set stays bounded.
    const open = new Set(s.ledger.map((e) => e.id));
    for (const id of this.notified) if (!open.has(id)) this.notified.delete(id);
    if (fresh.length) this.onOverdue(fresh);
  }

  dispose(): void {
    clearInterval(this.timer);
    this.item.dispose();
  }
}

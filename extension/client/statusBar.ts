// The status bar item: quiet when every handoff is acknowledged, a warning when a send has had no
// recipient ACK past its SLA, an error when the hub is down. It notifies once per item that goes
// overdue — an escalation nobody asked to see every second is noise.
import * as vscode from 'vscode';
import type { LedgerEntry, Snapshot } from '../protocol/views';
import type { HubState } from './hubSupervisor';
import { statusView, type StatusView } from './statusView';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('handoff.status', vscode.StatusBarAlignment.Left, 50);
  private readonly notified = new Set<string>();
  private timer?: NodeJS.Timeout;
  private view: StatusView = { text: '', tooltip: '', command: '' };

  constructor(
    private readonly state: () => HubState,
    private readonly snapshot: () => Snapshot | undefined,
    private readonly identity: () => string,
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
    this.view = statusView(this.state(), s, Date.now(), this.identity());
    this.item.text = this.view.text;
    // Plain text: previews are untrusted and must not be rendered as Markdown.
    this.item.tooltip = this.view.tooltip;
    this.item.command = this.view.command;
    this.item.backgroundColor = this.view.background
      ? new vscode.ThemeColor(`statusBarItem.${this.view.background}Background`)
      : undefined;
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
    const fresh = s.pending.filter((e) => s.overdue.ids.includes(e.id) && !this.notified.has(e.id));
    for (const e of fresh) this.notified.add(e.id);
    // Forget settled items so the set stays bounded.
    const open = new Set(s.pending.map((e) => e.id));
    for (const id of this.notified) if (!open.has(id)) this.notified.delete(id);
    if (fresh.length) this.onOverdue(fresh);
  }

  dispose(): void {
    clearInterval(this.timer);
    this.item.dispose();
  }
}

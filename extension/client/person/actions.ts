// What the person does with a handoff addressed to them, from the panel, the notification or the
// command palette: open it (which writes their read receipt), ACK it, reply (a handoff back to the
// sender, same thread, reply_to set), or report it done, stuck or rejected with a summary. Every
// receipt is written by this window's control session, as handoff.identity.
import * as vscode from 'vscode';
import type { Outcome } from '../../protocol/model';
import { INBOX_ACTS, type InboxAct } from '../../protocol/panel';
import type { HubSupervisor } from '../hubSupervisor';
import { openMessage } from '../messageDocument';
import { showSendResult } from '../commands/sendHandoff';
import { defaultSlaSeconds, humanIdentity } from '../settings';

const OUTCOME_PROMPT: Record<Outcome, string> = {
  done: 'What was done? The sender reads this summary in its receipts.',
  stuck: 'What is in the way? The sender reads this summary in its receipts.',
  rejected: 'Why not? The sender reads this summary in its receipts.',
};

export class InboxActions {
  constructor(private readonly hub: HubSupervisor) {}

  /** What this window can do: on another window's hub without its key, no receipts (the hub would refuse them). */
  get acts(): readonly InboxAct[] {
    return this.hub.personActs ? INBOX_ACTS : (['open', 'reply'] as const);
  }

  async run(act: InboxAct, id: string): Promise<void> {
    if (!this.acts.includes(act)) {
      void vscode.window.showInformationMessage(
        'Handoff: ACK and results for your inbox are in the window that started the hub; this window shares it.',
      );
      return;
    }
    switch (act) {
      case 'open':
        return this.open(id);
      case 'ack':
        return this.ack(id);
      case 'reply':
        return this.reply(id);
      default:
        return this.finish(id, act);
    }
  }

  /** Records that the person read it, then shows the whole handoff as plain text (with that receipt). */
  async open(id: string): Promise<void> {
    if (this.hub.personActs) await this.hub.receipt({ as: humanIdentity(), id, kind: 'read' });
    await openMessage((m) => this.hub.message(m), id);
  }

  async ack(id: string): Promise<void> {
    const r = await this.hub.receipt({ as: humanIdentity(), id, kind: 'ack' });
    vscode.window.setStatusBarMessage(
      r.recorded ? `Handoff: ACKed ${id}` : `Handoff: ${id} was already ${r.state}`,
      4000,
    );
  }

  async finish(id: string, outcome: Outcome): Promise<void> {
    const summary = await vscode.window.showInputBox({
      title: `Handoff: report ${outcome}`,
      prompt: OUTCOME_PROMPT[outcome],
      validateInput: (v) => (v.trim() ? undefined : 'A summary is required, or press Escape to cancel.'),
    });
    if (summary === undefined || !summary.trim()) return;
    const r = await this.hub.receipt({ as: humanIdentity(), id, kind: 'result', outcome, summary: summary.trim() });
    vscode.window.setStatusBarMessage(
      r.recorded ? `Handoff: reported ${outcome} for ${id}` : `Handoff: ${id} was already ${r.state}`,
      4000,
    );
  }

  /** A handoff back to the sender, in the same thread, with reply_to: pushed to it like any send. */
  async reply(id: string): Promise<void> {
    const view = await this.hub.message(id);
    if (!view) throw new Error(`No message ${id} on this hub.`);
    const to = view.message.from;
    const body = await vscode.window.showInputBox({
      title: `Reply to ${to}`,
      prompt: `A handoff back to ${to} in thread ${view.message.thread}`,
      validateInput: (v) => (v.trim() ? undefined : 'Write the reply, or press Escape to cancel.'),
    });
    if (body === undefined || !body.trim()) return;
    const result = await this.hub.send({
      as: humanIdentity(),
      asPerson: true,
      to: [to],
      body,
      thread: view.message.thread,
      replyTo: id,
      requiresAck: true,
      slaSeconds: defaultSlaSeconds(),
    });
    showSendResult(result);
  }
}

// The one notification per item that goes overdue (or is dead-lettered): say who has not
// acknowledged what, and offer to show it or chase it.
import * as vscode from 'vscode';
import type { LedgerEntry } from '../protocol/views';
import { inertLinks } from './inertLinks';

export function overdueText(items: LedgerEntry[]): string {
  if (items.length > 1) return `Handoff: ${items.length} handoffs went past their SLA without an ACK.`;
  const e = items[0];
  if (e.deadLettered) {
    const who = e.recipients
      .filter((r) => r.state === 'failed')
      .map((r) => r.recipient)
      .join(', ');
    return `Handoff: "${inertLinks(e.preview)}" was dead-lettered for ${who}: no ACK within its TTL.`;
  }
  const who = e.recipients
    .filter((r) => r.overdue)
    .map((r) => r.recipient)
    .join(', ');
  return `Handoff: ${who} has not acknowledged "${inertLinks(e.preview)}" past its SLA.`;
}

export function notifyOverdue(items: LedgerEntry[], show: () => unknown, chase: (id: string) => Promise<void>): void {
  void vscode.window.showWarningMessage(overdueText(items), 'Show', 'Chase').then((pick) => {
    if (pick === 'Show') show();
    if (pick === 'Chase') {
      for (const e of items)
        chase(e.id).catch((err) => vscode.window.showErrorMessage(`Handoff chase failed: ${(err as Error).message}`));
    }
  });
}

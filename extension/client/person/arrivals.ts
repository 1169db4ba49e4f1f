// Notice without noise: one notification per new handoff to the person (Open, ACK), never one
// for mail that was already there when the window opened (the badge and status bar count that),
// and a single summary when many arrive at once.
import * as vscode from 'vscode';
import type { PersonInboxItem } from '../../protocol/views';
import { arrivalText } from './inbox';

/** More than this many at once is one notification, not a stack of them. */
const AT_ONCE = 3;

export function notifyArrivals(
  items: PersonInboxItem[],
  act: (act: 'open' | 'ack', id: string) => Promise<void>,
  openInbox: () => unknown,
  /** Whether ACK works from this window (not on another window's hub without its key). */
  canAck = true,
): void {
  const fail = (e: unknown) => void vscode.window.showErrorMessage(`Handoff: ${(e as Error).message}`);
  if (items.length > AT_ONCE) {
    void vscode.window
      .showInformationMessage(`Handoff: ${items.length} new handoffs for you.`, 'Open Inbox')
      .then((pick) => {
        if (pick) openInbox();
      });
    return;
  }
  for (const i of items) {
    void vscode.window.showInformationMessage(arrivalText(i), ...(canAck ? ['Open', 'ACK'] : ['Open'])).then((pick) => {
      if (pick === 'Open') act('open', i.id).catch(fail);
      if (pick === 'ACK') act('ack', i.id).catch(fail);
    });
  }
}

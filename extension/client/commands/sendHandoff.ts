// "Handoff: Send Handoff…": pick a recipient (live and ghost marked), take the body from the
// editor selection or an input box, send as the person's identity, and report the honest result —
// queued or pushed to n sessions, never "sent" for something that did not happen.
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { SendResult } from '../../protocol/views';
import type { HubSupervisor } from '../hubSupervisor';
import { defaultSlaSeconds, humanIdentity } from '../settings';
import { describeResult, recipientPicks, refusalText, typedPick, type RecipientPick } from './sendText';

async function pickRecipient(hub: HubSupervisor, me: string): Promise<string | undefined> {
  const picks = recipientPicks(hub.snapshot, me);
  const qp = vscode.window.createQuickPick<RecipientPick>();
  qp.title = 'Send Handoff: recipient';
  qp.placeholder = picks.length
    ? 'Pick a recipient, or type an identity name'
    : 'No identities yet: type an identity name';
  qp.items = picks;
  qp.matchOnDescription = true;
  // A typed name that is not in the list is offered, marked; the hub answers an unknown name with an error that lists the nearest ones.
  qp.onDidChangeValue((v) => {
    const typed = typedPick(v.trim(), picks);
    qp.items = typed ? [...picks, typed] : picks;
  });
  return new Promise((resolve) => {
    qp.onDidAccept(() => {
      resolve(qp.selectedItems[0]?.identity);
      qp.hide();
    });
    qp.onDidHide(() => {
      resolve(undefined);
      qp.dispose();
    });
    qp.show();
  });
}

async function composeBody(to: string): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  const selection = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  if (selection && editor) {
    const where = `${basename(editor.document.fileName)}:${editor.selection.start.line + 1}-${editor.selection.end.line + 1}`;
    const note = await vscode.window.showInputBox({
      title: `Send Handoff to ${to}`,
      prompt: `The selection (${where}) goes with it. Add a note above it, or leave empty.`,
      placeHolder: 'What should they do with it?',
    });
    if (note === undefined) return undefined;
    const fence = selection.includes('```') ? '~~~~' : '```';
    return `${note.trim() ? `${note.trim()}\n\n` : ''}${where}\n${fence}\n${selection}\n${fence}`;
  }
  return vscode.window.showInputBox({
    title: `Send Handoff to ${to}`,
    prompt: 'What should they do? (select text in an editor first to send it along)',
    validateInput: (v) => (v.trim() ? undefined : 'Write the handoff, or press Escape to cancel.'),
  });
}

export async function sendHandoff(hub: HubSupervisor, log: vscode.LogOutputChannel): Promise<SendResult | undefined> {
  const me = humanIdentity();
  const to = await pickRecipient(hub, me);
  if (!to) return undefined;
  const body = await composeBody(to);
  if (body === undefined || !body.trim()) return undefined;
  let result: SendResult;
  try {
    result = await hub.send({
      as: me,
      to: [to],
      body,
      slaSeconds: defaultSlaSeconds(),
      requiresAck: true,
      asPerson: true,
    });
  } catch (e) {
    const text = refusalText(to, (e as Error).message);
    log.warn(text);
    void vscode.window.showErrorMessage(text);
    return undefined;
  }
  showSendResult(result);
  return result;
}

/** What happened to a send from the editor, in one notification: a warning when nobody got it or it was not sent again. */
export function showSendResult(result: SendResult): void {
  const text = describeResult(result);
  if (result.duplicate || result.state === 'queued') void vscode.window.showWarningMessage(text);
  else void vscode.window.showInformationMessage(text);
}

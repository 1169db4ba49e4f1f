// "Handoff: Open Inbox…": the person's handoffs in a quick pick (newest first, unread marked),
// then what to do with the one picked. The whole inbox works from the keyboard.
import * as vscode from 'vscode';
import type { Snapshot } from '../../protocol/views';
import type { InboxAct } from '../../protocol/panel';
import type { InboxActions } from '../person/actions';
import { inboxItems, inboxPicks } from '../person/inbox';
import { humanIdentity } from '../settings';

interface ActPick extends vscode.QuickPickItem {
  act: InboxAct;
}

const ACT_LABEL: Record<InboxAct, string> = {
  open: '$(go-to-file) Open',
  ack: '$(check) ACK',
  reply: '$(reply) Reply…',
  done: '$(pass) Done…',
  stuck: '$(debug-pause) Stuck…',
  rejected: '$(circle-slash) Rejected…',
};

/** `act` and `id` skip the picks (for keybindings and tests). */
export async function openInbox(
  snapshot: () => Snapshot | undefined,
  actions: InboxActions,
  args?: { id?: string; act?: InboxAct },
): Promise<void> {
  let id = args?.id;
  if (!id) {
    const items = inboxItems(snapshot(), humanIdentity());
    const picked = await vscode.window.showQuickPick(inboxPicks(items), {
      title: `Handoff inbox of ${humanIdentity()}`,
      placeHolder: items.length ? 'Pick a handoff' : 'Your inbox is empty',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    id = picked?.id;
  }
  if (!id) return;
  let act = args?.act;
  if (!act) {
    const picked = await vscode.window.showQuickPick<ActPick>(
      actions.acts.map((a) => ({ act: a, label: ACT_LABEL[a] })),
      { title: `Handoff ${id}`, placeHolder: 'What do you do with it?' },
    );
    act = picked?.act;
  }
  if (act) await actions.run(act, id);
}

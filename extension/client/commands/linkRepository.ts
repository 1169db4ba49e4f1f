// "Handoff: Link Repository" and "Handoff: Unlink Repository": the editor's way to `handoff link`
// and `handoff unlink`. Linking is done on both sides (this window's repository and the other's);
// the message says whether the other side has agreed yet. A folder argument skips the prompt.
import * as vscode from 'vscode';
import type { LinksView } from '../../protocol/link';
import type { HubSupervisor } from '../hubSupervisor';

/** The hub keeps the repository's root; the folder picked may be inside it. */
function linkLine(v: LinksView, picked: string): string {
  const l = v.links.find((x) => picked === x.root || picked.startsWith(`${x.root}/`));
  const root = l?.root ?? picked;
  if (!l) return `${root} is not linked.`;
  if (l.state === 'linked') return `Linked: agents there are NAME@${l.name}; here, this repository is ${v.name}.`;
  if (l.state === 'waiting')
    return `Linked here. Nothing flows until the other side links back: run "Handoff: Link Repository" in ${root}'s window, or \`handoff link\` with this folder there.`;
  return `Linked here (${l.state}${l.error ? `: ${l.error}` : ''}).`;
}

export async function linkRepository(supervisor: HubSupervisor, folder?: string): Promise<LinksView | undefined> {
  let root = folder;
  if (!root) {
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      openLabel: 'Link this repository',
      title: 'Handoff: the repository whose agents this one hands work to',
    });
    root = picked?.[0]?.fsPath;
  }
  if (!root) return undefined;
  try {
    const v = await supervisor.links({ link: root });
    void vscode.window.showInformationMessage(`Handoff: ${linkLine(v, root)}`);
    return v;
  } catch (e) {
    void vscode.window.showErrorMessage(`Handoff: linking ${root} failed: ${(e as Error).message}`);
    return undefined;
  }
}

/** Unlinking stops what flows both ways: the person says so once, in a modal, from the view or the palette. */
async function confirmed(v: LinksView, root: string): Promise<boolean> {
  const l = v.links.find((x) => x.root === root);
  const name = l?.name ?? root;
  const waiting = l?.outbox ? ` ${l.outbox} item(s) waiting for it stay in the outbox until it is linked again.` : '';
  const answer = await vscode.window.showWarningMessage(
    `Unlink ${name}?`,
    {
      modal: true,
      detail: `Nothing flows to or from ${root} until it is linked again here.${waiting}`,
    },
    'Unlink',
  );
  return answer === 'Unlink';
}

/** `confirm`: false only for a caller that already asked (a test's or a script's folder argument skips it too). */
export async function unlinkRepository(
  supervisor: HubSupervisor,
  folder?: string,
  confirm = !folder,
): Promise<LinksView | undefined> {
  let root = folder;
  if (!root) {
    const v = await supervisor.links({});
    const linked = v.links.filter((l) => l.state !== 'unlinked');
    if (linked.length === 0) {
      void vscode.window.showInformationMessage('Handoff: no repository is linked to this one.');
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      linked.map((l) => ({ label: l.name ?? l.root, description: l.root, root: l.root })),
      { title: 'Handoff: unlink which repository? (what waits for it stays in the outbox)' },
    );
    root = pick?.root;
  }
  if (!root) return undefined;
  if (confirm && !(await confirmed(await supervisor.links({}), root))) return undefined;
  try {
    const v = await supervisor.links({ unlink: root });
    void vscode.window.showInformationMessage(`Handoff: ${root} is unlinked; nothing flows to or from it.`);
    return v;
  } catch (e) {
    void vscode.window.showErrorMessage(`Handoff: unlinking ${root} failed: ${(e as Error).message}`);
    return undefined;
  }
}

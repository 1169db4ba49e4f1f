// The unread count on the Handoff icon from the moment the window opens. A webview view's badge
// exists only once the editor has resolved the view, that is after it was first shown, and there
// is no API to badge a view container. A tree view's badge does not wait for that: the editor
// puts it on the tree view's container whether the view was ever rendered or not. So a tree view
// that is never shown (`"when": "false"` in package.json, next to the Handoff view) carries it.
import * as vscode from 'vscode';

export class UnreadBadge implements vscode.Disposable {
  static readonly viewId = 'handoff.unread';
  private readonly view = vscode.window.createTreeView<never>(UnreadBadge.viewId, {
    treeDataProvider: { getChildren: () => [], getTreeItem: (e: never) => e },
  });
  private shown?: vscode.ViewBadge;

  /** The badge now on the icon (tests read it). */
  get current(): vscode.ViewBadge | undefined {
    return this.shown;
  }

  set(badge: vscode.ViewBadge | undefined): void {
    if (badge?.value === this.shown?.value && badge?.tooltip === this.shown?.tooltip) return;
    this.shown = badge;
    this.view.badge = badge;
  }

  dispose(): void {
    this.view.dispose();
  }
}

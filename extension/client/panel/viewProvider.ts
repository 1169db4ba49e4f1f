// The Handoff sidebar view: serves the webview's HTML under a strict CSP, posts the panel model
// on every change, and turns the view's requests into commands. The view never gets raw HTML.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import {
  INBOX_ACTS as ACTS,
  SEARCH_LIMIT,
  type HostToPanel,
  type InboxAct,
  type PanelFilter,
  type PanelModel,
  type PanelToHost,
} from '../../protocol/panel';
import { PanelDiff } from './diff';
import { resultsView, searchRequest } from './search';
import { parseSearch } from '../../shared/searchQuery';
import type { SearchHit, SearchQuery } from '../../protocol/views';

export interface PanelActions {
  open(id: string): Promise<void>;
  copyId(id: string): Promise<void>;
  chase(id: string): Promise<void>;
  resolve(id: string): Promise<void>;
  inbox(act: InboxAct, id: string): Promise<void>;
  /** Every handoff that answers, open or in history, newest first: the person sees everything. */
  search(q: SearchQuery): Promise<SearchHit[]>;
  /** The empty state's button: pick an agent CLI and connect it. */
  connect(): Promise<void>;
  /** A linked repository's unlink action: asks the person to confirm, then unlinks it. */
  unlink(root: string): Promise<void>;
}

const INBOX_ACTS = new Set<string>(ACTS);

export class PanelViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'handoff.panel';
  private view?: vscode.WebviewView;
  /** Posting into a view before its script listens loses the message: wait for its 'ready'. */
  private ready = false;
  /** What the view holds: each post carries only the rows that changed since the last. */
  private readonly diff = new PanelDiff();
  private filter: PanelFilter = 'all';
  /** Subscriptions of the current view; the editor may dispose a view and resolve a new one. */
  private viewSubscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly model: (filter: PanelFilter) => PanelModel,
    private readonly actions: PanelActions,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  get currentFilter(): PanelFilter {
    return this.filter;
  }

  /** The model the view shows now (tests read this). */
  currentModel(): PanelModel {
    const m = this.model(this.filter);
    // Nothing overdue any more: the view shows everything again (its focus command sets no filter).
    if (this.filter === 'overdue' && m.overdueCount === 0) {
      this.filter = 'all';
      return this.model(this.filter);
    }
    return m;
  }

  setFilter(filter: PanelFilter): void {
    this.filter = filter;
    this.refresh();
  }

  refresh(): void {
    if (!this.view) return;
    // No badge on this view: the editor adds up the number badges of a container's views, and the
    // unread count is already on the icon from activation (UnreadBadge, in unreadBadge.ts).
    if (!this.ready) return;
    const message: HostToPanel = { type: 'update', update: this.diff.update(this.currentModel()) };
    void this.view.webview.postMessage(message);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.disposeView();
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.extensionUri, 'dist', 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview, media);
    this.viewSubscriptions = [
      view.webview.onDidReceiveMessage((m: PanelToHost) => void this.onMessage(m)),
      view.onDidChangeVisibility(() => this.refresh()),
      view.onDidDispose(() => this.disposeView()),
    ];
  }

  private async onMessage(m: PanelToHost): Promise<void> {
    try {
      switch (m.type) {
        case 'ready':
          this.ready = true;
          this.diff.reset(); // a fresh view holds nothing
          this.refresh();
          return;
        case 'filter':
          this.setFilter(m.filter === 'overdue' ? 'overdue' : 'all');
          return;
        case 'open':
          return await this.actions.open(String(m.id));
        case 'copyId':
          return await this.actions.copyId(String(m.id));
        case 'chase':
          return await this.actions.chase(String(m.id));
        case 'resolve':
          return await this.actions.resolve(String(m.id));
        case 'inbox':
          if (!INBOX_ACTS.has(m.act)) throw new Error(`unknown inbox action ${String(m.act).slice(0, 40)}`);
          return await this.actions.inbox(m.act, String(m.id));
        case 'search':
          return await this.search(m);
        case 'connect':
          return await this.actions.connect();
        case 'unlink':
          return await this.unlink(m.root);
      }
    } catch (e) {
      this.log.error(`panel action ${m.type} failed: ${(e as Error).message}`);
      void vscode.window.showErrorMessage(`Handoff: ${(e as Error).message}`);
    }
  }

  /** Only a repository the view lists: the webview names it, the host checks it. */
  private async unlink(root: unknown): Promise<void> {
    const listed = this.currentModel().links.rows.find((l) => l.root === root && l.canUnlink);
    if (!listed) throw new Error(`${String(root).slice(0, 200)} is not a linked repository`);
    await this.actions.unlink(listed.root);
  }

  /** Answers the search box; a bad query or a hub that cannot answer is said in the view, not in a toast. */
  private async search(m: unknown): Promise<void> {
    const req = searchRequest(m);
    if (typeof req === 'string') throw new Error(req);
    const post = (message: HostToPanel) => void this.view?.webview.postMessage(message);
    const q = parseSearch(req.text, SEARCH_LIMIT);
    if (typeof q === 'string') {
      post({ type: 'searchResults', results: { seq: req.seq, hits: [], summary: '', error: q } });
      return;
    }
    try {
      post({ type: 'searchResults', results: resultsView(req.seq, await this.actions.search(q)) });
    } catch (e) {
      const why = (e as Error).message;
      post({ type: 'searchResults', results: { seq: req.seq, hits: [], summary: '', error: why } });
    }
  }

  private html(webview: vscode.Webview, media: vscode.Uri): string {
    const nonce = randomBytes(16).toString('base64');
    const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(media, name)).toString();
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset('codicon.css')}" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${asset('panel.css')}">
<title>Handoff</title>
</head>
<body>
<main id="root"></main>
<script type="module" nonce="${nonce}" src="${asset('elements.js')}"></script>
<script nonce="${nonce}" src="${asset('panel.js')}"></script>
</body>
</html>`;
  }

  private disposeView(): void {
    for (const d of this.viewSubscriptions) d.dispose();
    this.viewSubscriptions = [];
    this.view = undefined;
    this.ready = false;
  }

  dispose(): void {
    this.disposeView();
  }
}

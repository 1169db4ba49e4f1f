// The Handoff sidebar webview. It renders the panel model the host posts (as text only: every
// field is untrusted, bodies above all) and patches rows in place by message id, so live updates
// neither flicker nor move the scroll position.
import type { CoverageView, EventView, HostToPanel, MatrixView, PanelModel, PanelToHost, RecipientView, SessionView } from '../extension/client/panel/protocol';

declare function acquireVsCodeApi(): { postMessage(m: PanelToHost): void };
const host = acquireVsCodeApi();

type Child = Node | string | undefined | false;

/** Builds an element; strings become text nodes, never markup. */
function el(tag: string, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) e.setAttribute(k, v);
  for (const c of children) if (c) e.append(c);
  return e;
}

function icon(name: string, cls = ''): HTMLElement {
  return el('i', { class: `codicon codicon-${name} ${cls}`.trim(), 'aria-hidden': 'true' });
}

function action(name: string, label: string, act: string, id: string): HTMLElement {
  return el('vscode-icon', { name, 'action-icon': '', label, title: label, 'data-action': act, 'data-id': id });
}

function clock(at: number): string {
  return new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });
}

function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

// The hub's clock may differ from this one: countdowns use the offset seen at the last model.
let clockOffset = 0;
const hubNow = () => Date.now() + clockOffset;

function countdown(e: EventView): string {
  if (e.dueAt === undefined) return 'no ACK requested';
  const left = e.dueAt - hubNow();
  return left >= 0 ? `ACK due in ${span(left)}` : `overdue by ${span(-left)}`;
}

/** Keeps `container`'s children in the order of `items`, rebuilding a row only when its signature changed. */
function reconcile<T>(container: HTMLElement, items: T[], key: (t: T) => string, render: (t: T) => HTMLElement): void {
  const existing = new Map<string, HTMLElement>();
  for (const child of Array.from(container.children) as HTMLElement[]) if (child.dataset.key) existing.set(child.dataset.key, child);
  let cursor: Element | null = container.firstElementChild;
  const keep = new Set<string>();
  for (const item of items) {
    const k = key(item);
    keep.add(k);
    const sig = JSON.stringify(item);
    let row = existing.get(k);
    if (!row || row.dataset.sig !== sig) {
      const fresh = render(item);
      fresh.dataset.key = k;
      fresh.dataset.sig = sig;
      if (row) {
        if (row === cursor) cursor = fresh;
        row.replaceWith(fresh);
      }
      row = fresh;
    }
    if (row !== cursor) container.insertBefore(row, cursor);
    cursor = row.nextElementSibling;
  }
  for (const [k, row] of existing) if (!keep.has(k)) row.remove();
}

function receipt(r: RecipientView): HTMLElement {
  return el('li', { class: `receipt tone-${r.tone}`, title: r.detail, 'data-state': r.state, 'data-recipient': r.identity },
    icon(r.icon), el('span', { class: 'who' }, r.identity), el('span', { class: 'label' }, r.label));
}

function eventRow(e: EventView): HTMLElement {
  const flags = [e.overdue && 'overdue', e.deadLettered && 'dead', e.resolved && 'resolved'].filter(Boolean).join(' ');
  const actions = el('span', { class: 'actions' },
    action('go-to-file', 'Open message', 'open', e.id),
    action('copy', 'Copy message id', 'copyId', e.id),
    e.awaitingAck && action('bell', 'Chase: push again, flagged as a chase', 'chase', e.id),
    e.open && action('check-all', 'Mark resolved', 'resolve', e.id));
  return el('article', { class: `event ${flags}`.trim(), 'data-id': e.id, tabindex: '0' },
    el('div', { class: 'head' },
      el('span', { class: 'from' }, e.from), icon('arrow-small-right', 'dim'), el('span', { class: 'to' }, e.to.join(', ')),
      el('span', { class: 'when', title: new Date(e.sentAt).toLocaleString() }, clock(e.sentAt)),
      actions),
    el('div', { class: 'preview', title: e.id }, e.preview),
    el('ul', { class: 'receipts' }, ...e.recipients.map(receipt)),
    e.advisoryReads && el('div', { class: 'advisory dim', title: e.advisoryReads.note }, icon('eye'), el('span', { class: 'label' }, e.advisoryReads.label)),
    e.thread !== e.id ? el('div', { class: 'thread dim' }, icon('comment-discussion'), `thread ${e.thread}`) : undefined);
}

function pendingRow(e: EventView): HTMLElement {
  const late = e.overdue || e.deadLettered;
  const status = e.deadLettered ? 'dead-lettered' : e.awaitingAck ? countdown(e) : 'awaiting result';
  return el('div', { class: `pending-row ${late ? 'overdue' : ''}`.trim(), 'data-id': e.id },
    el('div', { class: 'head' },
      icon(late ? 'warning' : 'clock'),
      el('span', { class: 'from' }, e.from), icon('arrow-small-right', 'dim'), el('span', { class: 'to' }, e.to.join(', ')),
      el('span', { class: 'actions' }, e.awaitingAck && action('bell', 'Chase: push again, flagged as a chase', 'chase', e.id), action('check-all', 'Mark resolved', 'resolve', e.id))),
    el('div', { class: 'preview' },
      el('span', { class: 'countdown', 'data-due': e.awaitingAck && !e.deadLettered && e.dueAt !== undefined ? String(e.dueAt) : '' }, status),
      ' · ', e.preview));
}

function sessionRow(s: SessionView): HTMLElement {
  return el('div', { class: 'session-row', title: `session ${s.key}${s.roles.length ? `, roles ${s.roles.join(', ')}` : ''}` },
    icon('circle-filled', 'live'), el('span', { class: 'who' }, s.identity), el('span', { class: 'dim' }, s.client || 'agent'),
    el('span', { class: 'when dim' }, `since ${clock(s.connectedAt)}`));
}

function coverageRow(c: CoverageView): HTMLElement {
  const meter = el('div', { class: 'meter', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': String(c.addressed), 'aria-valuenow': String(c.acked) });
  const fill = el('div', { class: 'fill' });
  fill.style.width = c.addressed ? `${Math.round((100 * c.acked) / c.addressed)}%` : '0';
  meter.append(fill);
  const status = c.ghost
    ? el('span', { class: 'ghost', title: `${c.unacked} unacked and no live session` }, icon('warning'), `ghost · ${c.unacked} waiting`)
    : el('span', { class: c.liveSessions ? 'live-count' : 'dim' }, c.liveSessions ? `${c.liveSessions} live` : 'offline');
  return el('div', { class: `coverage-row ${c.ghost ? 'is-ghost' : ''}`.trim(), 'data-identity': c.identity, title: c.detail },
    el('span', { class: 'who' }, c.identity), meter, el('span', { class: 'dim' }, c.label), status);
}

function section(id: string, heading: string): { box: HTMLElement; list: HTMLElement; badge: HTMLElement; empty: HTMLElement } {
  const badge = el('vscode-badge', { variant: 'counter', slot: 'decorations' });
  const list = el('div', { class: 'list', id: `${id}-list` });
  const empty = el('p', { class: 'empty dim' });
  const box = el('vscode-collapsible', { heading, open: '', id }, badge, list, empty);
  return { box, list, badge, empty };
}

const root = document.getElementById('root')!;
const hubLine = el('div', { class: 'hub-line' });
const matrixBox = el('section', { class: 'matrix', 'aria-label': 'Matrix link', hidden: '' });
const filterBar = el('div', { class: 'filter-bar', hidden: '' });
const events = section('events', 'Events');
const pending = section('pending', 'Pending');
const sessions = section('sessions', 'Sessions');
const coverage = section('coverage', 'Coverage');
root.append(hubLine, matrixBox, filterBar, events.box, pending.box, sessions.box, coverage.box);

function renderHub(m: PanelModel): void {
  const storeBad = m.store && !m.store.ok;
  const tone = m.hub.state === 'down' || storeBad ? 'error' : m.hub.state === 'starting' ? 'muted' : m.overdueCount ? 'warn' : 'ok';
  const iconName = m.hub.state === 'down' ? 'error' : m.hub.state === 'starting' ? 'loading codicon-modifier-spin' : 'radio-tower';
  const text = storeBad ? `Store failing: ${m.store?.error ?? ''}` : m.hub.detail;
  const sig = `${tone}|${iconName}|${text}`;
  if (hubLine.dataset.sig === sig) return;
  hubLine.dataset.sig = sig;
  hubLine.className = `hub-line tone-${tone}`;
  hubLine.replaceChildren(icon(iconName), el('span', { class: 'hub-text', title: text }, text));
}

/** The Matrix header: state, account, room, homeserver, outbox and last sync; hidden when Matrix is off. */
function renderMatrix(x: MatrixView | undefined): void {
  const sig = JSON.stringify(x ?? null);
  if (matrixBox.dataset.sig === sig) return;
  matrixBox.dataset.sig = sig;
  if (!x) {
    matrixBox.hidden = true;
    matrixBox.replaceChildren();
    return;
  }
  matrixBox.hidden = false;
  matrixBox.className = `matrix tone-${x.tone}`;
  matrixBox.dataset.state = x.state;
  const outbox = el('vscode-badge', { variant: x.outbox ? 'counter' : 'default', title: x.outboxLabel, class: 'outbox' }, `outbox ${x.outbox}`);
  const rows: HTMLElement[] = [
    el('div', { class: `matrix-head tone-${x.tone}` }, icon(x.icon), el('span', { class: 'matrix-state', title: x.headline }, `Matrix ${x.state}`), outbox),
    el('div', { class: 'matrix-detail' }, icon('account', 'dim'), el('span', { class: 'matrix-user' }, x.userId ?? 'signing in…'),
      el('span', { class: 'dim' }, 'in'), el('span', { class: 'matrix-room', title: x.room ?? '' }, x.room ?? '')),
    el('div', { class: 'matrix-detail dim' }, icon('server'), el('span', { class: 'matrix-homeserver', title: x.homeserver }, x.homeserver),
      el('span', { class: 'matrix-sync' }, `· ${x.lastSyncLabel}`)),
  ];
  if (x.error) rows.push(el('div', { class: 'matrix-error', title: x.error }, icon('warning'), el('span', {}, x.error)));
  for (const n of x.notices) rows.push(el('div', { class: 'matrix-error matrix-notice', title: n }, icon('shield'), el('span', {}, n)));
  if (x.droppedLabel) rows.push(el('div', { class: 'matrix-detail dim matrix-dropped', title: x.droppedLabel }, icon('filter'), el('span', {}, x.droppedLabel)));
  matrixBox.replaceChildren(...rows);
}

function renderFilter(m: PanelModel): void {
  const sig = `${m.filter}|${m.overdueCount}`;
  if (filterBar.dataset.sig === sig) return;
  filterBar.dataset.sig = sig;
  if (m.filter === 'all') {
    filterBar.hidden = true;
    filterBar.replaceChildren();
    return;
  }
  filterBar.hidden = false;
  filterBar.replaceChildren(icon('filter'), el('span', {}, `Showing ${m.overdueCount} overdue`),
    el('a', { href: '#', 'data-action': 'filter', 'data-filter': 'all' }, 'Show all'));
}

function render(m: PanelModel): void {
  clockOffset = m.now - Date.now();
  renderHub(m);
  renderMatrix(m.matrix);
  renderFilter(m);
  reconcile(events.list, m.events, (e) => e.id, eventRow);
  events.badge.textContent = String(m.events.length);
  events.empty.textContent = m.events.length ? '' : m.filter === 'overdue' ? 'Nothing is overdue.' : 'No handoffs yet. Agents connect through the Handoff MCP server; "Send Handoff…" starts one from here.';
  reconcile(pending.list, m.pending, (e) => e.id, pendingRow);
  pending.badge.textContent = String(m.pending.length);
  pending.empty.textContent = m.pending.length ? '' : 'Every handoff is acknowledged.';
  reconcile(sessions.list, m.sessions, (s) => s.key, sessionRow);
  sessions.badge.textContent = String(m.sessions.length);
  sessions.empty.textContent = m.sessions.length ? '' : 'No agent is connected.';
  reconcile(coverage.list, m.coverage, (c) => c.identity, coverageRow);
  coverage.badge.textContent = m.ghosts.length ? `${m.ghosts.length} ghost${m.ghosts.length > 1 ? 's' : ''}` : String(m.coverage.length);
  coverage.empty.textContent = m.coverage.length ? '' : 'No identities yet.';
  tick();
}

// Only the countdown texts change with time; nothing else is touched between models.
function tick(): void {
  for (const c of Array.from(document.querySelectorAll<HTMLElement>('.countdown[data-due]'))) {
    if (!c.dataset.due) continue;
    const left = Number(c.dataset.due) - hubNow();
    const text = left >= 0 ? `ACK due in ${span(left)}` : `overdue by ${span(-left)}`;
    if (c.textContent !== text) c.textContent = text;
  }
}
setInterval(tick, 1000);

document.addEventListener('click', (ev) => {
  const target = (ev.target as HTMLElement).closest<HTMLElement>('[data-action]');
  if (!target) return;
  ev.preventDefault();
  const act = target.dataset.action;
  const id = target.dataset.id ?? '';
  if (act === 'filter') host.postMessage({ type: 'filter', filter: target.dataset.filter === 'overdue' ? 'overdue' : 'all' });
  else if (act === 'open' || act === 'copyId' || act === 'chase' || act === 'resolve') host.postMessage({ type: act, id });
});

// Enter on a focused event opens it, like a list item in the editor.
document.addEventListener('keydown', (ev) => {
  const row = (ev.target as HTMLElement).closest<HTMLElement>('article.event');
  if (ev.key === 'Enter' && row?.dataset.id && ev.target === row) host.postMessage({ type: 'open', id: row.dataset.id });
});

window.addEventListener('message', (ev: MessageEvent<HostToPanel>) => {
  if (ev.data?.type === 'model') render(ev.data.model);
});
host.postMessage({ type: 'ready' });

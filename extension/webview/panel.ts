// The Handoff sidebar webview. It renders the panel model the host posts (as text only: every
// field is untrusted, bodies above all) and patches rows in place by message id, so live updates
// neither flicker nor move the scroll position.
import { clock, countdown } from '../shared/format';
import type {
  CoverageView,
  EventView,
  HostToPanel,
  InboxAct,
  InboxRowView,
  ListPatch,
  MatrixView,
  PanelToHost,
  PanelUpdate,
  RecipientView,
  SessionView,
} from '../protocol/panel';
import { searchBox } from './search';
import { linkRow } from './links';

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

// The hub's clock may differ from this one: countdowns use the offset seen at the last model.
let clockOffset = 0;
const hubNow = () => Date.now() + clockOffset;

function dueText(due: number): string {
  const left = due - hubNow();
  return left >= 0 ? `ACK due in ${countdown(left)}` : `overdue by ${countdown(-left)}`;
}

function ackDue(e: EventView): string {
  return e.dueAt === undefined ? 'no ACK requested' : dueText(e.dueAt);
}

/**
 * Applies a keyed list patch: rebuilds only the rows the host sent (they changed), keeps the rest
 * as they are, puts every row in the host's order and drops the keys no longer listed.
 */
function reconcile<T>(
  container: HTMLElement,
  patch: ListPatch<T>,
  key: (t: T) => string,
  render: (t: T) => HTMLElement,
): void {
  const existing = new Map<string, HTMLElement>();
  for (const child of Array.from(container.children) as HTMLElement[])
    if (child.dataset.key) existing.set(child.dataset.key, child);
  for (const item of patch.changed) {
    const k = key(item);
    const fresh = render(item);
    fresh.dataset.key = k;
    existing.get(k)?.replaceWith(fresh);
    existing.set(k, fresh);
  }
  let cursor: Element | null = container.firstElementChild;
  const keep = new Set(patch.order);
  for (const k of patch.order) {
    const row = existing.get(k);
    if (!row) continue; // the host posts a row before it lists its key
    if (row !== cursor) container.insertBefore(row, cursor);
    cursor = row.nextElementSibling;
  }
  for (const [k, row] of existing) if (!keep.has(k)) row.remove();
}

function receipt(r: RecipientView): HTMLElement {
  return el(
    'li',
    { class: `receipt tone-${r.tone}`, title: r.detail, 'data-state': r.state, 'data-recipient': r.identity },
    icon(r.icon),
    el('span', { class: 'who' }, r.identity),
    el('span', { class: 'label' }, r.label),
    r.summary && el('span', { class: 'summary', title: r.summary }, r.summary),
  );
}

function eventRow(e: EventView): HTMLElement {
  const flags = [e.overdue && 'overdue', e.deadLettered && 'dead', e.resolved && 'resolved'].filter(Boolean).join(' ');
  const actions = el(
    'span',
    { class: 'actions' },
    action('go-to-file', 'Open message', 'open', e.id),
    action('copy', 'Copy message id', 'copyId', e.id),
    e.awaitingAck && action('bell', 'Chase: push again, flagged as a chase', 'chase', e.id),
    e.open && action('check-all', 'Mark resolved', 'resolve', e.id),
  );
  return el(
    'article',
    { class: `event ${flags}`.trim(), 'data-id': e.id, tabindex: '0' },
    el(
      'div',
      { class: 'head' },
      el('span', { class: 'from' }, e.from),
      icon('arrow-small-right', 'dim'),
      el('span', { class: 'to' }, e.to.join(', ')),
      el('span', { class: 'when', title: new Date(e.sentAt).toLocaleString() }, clock(e.sentAt, false)),
      actions,
    ),
    el('div', { class: 'preview', title: e.id }, e.preview),
    el('ul', { class: 'receipts' }, ...e.recipients.map(receipt)),
    e.advisoryReads &&
      el(
        'div',
        { class: 'advisory dim', title: e.advisoryReads.note },
        icon('eye'),
        el('span', { class: 'label' }, e.advisoryReads.label),
      ),
    e.thread !== e.id
      ? el('div', { class: 'thread dim' }, icon('comment-discussion'), `thread ${e.thread}`)
      : undefined,
  );
}

/** Keys on a focused inbox row, like a mail list: Enter opens, A ACKs, R replies, D / S / X report done / stuck / rejected. */
const INBOX_KEYS: Record<string, InboxAct> = {
  Enter: 'open',
  a: 'ack',
  r: 'reply',
  d: 'done',
  s: 'stuck',
  x: 'rejected',
};

function inboxAction(name: string, label: string, act: InboxAct, id: string): HTMLElement {
  return el('vscode-icon', {
    name,
    'action-icon': '',
    label,
    title: label,
    'data-action': 'inbox',
    'data-act': act,
    'data-id': id,
  });
}

function inboxRow(i: InboxRowView): HTMLElement {
  const flags = [i.unread && 'unread', i.escalation && 'escalation'].filter(Boolean).join(' ');
  const mark = i.escalation
    ? icon('warning', 'mark')
    : i.unread
      ? icon('circle-filled', 'mark')
      : icon('circle-outline', 'mark dim');
  const actions = el(
    'span',
    { class: 'actions' },
    inboxAction('go-to-file', 'Open (Enter)', 'open', i.id),
    i.canAck && inboxAction('check', 'ACK (A)', 'ack', i.id),
    inboxAction('reply', 'Reply… (R)', 'reply', i.id),
    inboxAction('pass', 'Done… (D)', 'done', i.id),
    inboxAction('debug-pause', 'Stuck… (S)', 'stuck', i.id),
    inboxAction('circle-slash', 'Rejected… (X)', 'rejected', i.id),
  );
  return el(
    'article',
    {
      class: `inbox-row ${flags}`.trim(),
      'data-id': i.id,
      'data-state': i.state,
      tabindex: '0',
      title: i.detail,
      'aria-label': `${i.unread ? 'Unread: ' : ''}${i.headline}: ${i.preview}`,
      'aria-keyshortcuts': 'Enter A R D S X',
    },
    el(
      'div',
      { class: 'head' },
      mark,
      el('span', { class: 'from' }, i.headline),
      i.origin &&
        el('span', { class: 'origin dim', title: `from the linked repository ${i.origin}` }, icon('repo'), i.origin),
      el('span', { class: 'when', title: new Date(i.sentAt).toLocaleString() }, clock(i.sentAt)),
      actions,
    ),
    el('div', { class: 'preview' }, i.preview),
    el('div', { class: 'inbox-state dim' }, i.stateLabel),
  );
}

function pendingRow(e: EventView): HTMLElement {
  const late = e.overdue || e.deadLettered;
  const status = e.deadLettered ? 'dead-lettered' : e.awaitingAck ? ackDue(e) : 'awaiting result';
  return el(
    'div',
    { class: `pending-row ${late ? 'overdue' : ''}`.trim(), 'data-id': e.id },
    el(
      'div',
      { class: 'head' },
      icon(late ? 'warning' : 'clock'),
      el('span', { class: 'from' }, e.from),
      icon('arrow-small-right', 'dim'),
      el('span', { class: 'to' }, e.to.join(', ')),
      el(
        'span',
        { class: 'actions' },
        e.awaitingAck && action('bell', 'Chase: push again, flagged as a chase', 'chase', e.id),
        action('check-all', 'Mark resolved', 'resolve', e.id),
      ),
    ),
    el(
      'div',
      { class: 'preview' },
      el(
        'span',
        {
          class: 'countdown',
          'data-due': e.awaitingAck && !e.deadLettered && e.dueAt !== undefined ? String(e.dueAt) : '',
        },
        status,
      ),
      ' · ',
      e.preview,
    ),
  );
}

function sessionRow(s: SessionView): HTMLElement {
  return el(
    'div',
    { class: 'session-row', title: `session ${s.label}${s.roles.length ? `, roles ${s.roles.join(', ')}` : ''}` },
    icon('circle-filled', 'live'),
    el('span', { class: 'who' }, s.identity),
    el('span', { class: 'dim' }, s.client || 'agent'),
    el('span', { class: 'when dim' }, `since ${clock(s.connectedAt)}`),
  );
}

function coverageRow(c: CoverageView): HTMLElement {
  const meter = el('div', {
    class: 'meter',
    role: 'meter',
    'aria-valuemin': '0',
    'aria-valuemax': String(c.addressed),
    'aria-valuenow': String(c.acked),
    'aria-valuetext': c.label,
    'aria-label': `${c.identity}: ${c.label}`,
  });
  const fill = el('div', { class: 'fill' });
  fill.style.width = c.addressed ? `${Math.round((100 * c.acked) / c.addressed)}%` : '0';
  meter.append(fill);
  const status = c.ghost
    ? el(
        'span',
        { class: 'ghost', title: `${c.unacked} unacked and no live session` },
        icon('warning'),
        `ghost · ${c.unacked} waiting`,
      )
    : c.person && !c.liveSessions
      ? el(
          'span',
          { class: c.person.live ? 'live-count person' : 'dim person' },
          icon('person', c.person.live ? 'live' : ''),
          c.person.label,
        )
      : c.liveSessions
        ? el('span', { class: 'live-count' }, icon('circle-filled', 'live'), `${c.liveSessions} live`)
        : el('span', { class: 'dim' }, 'offline');
  return el(
    'div',
    { class: `coverage-row ${c.ghost ? 'is-ghost' : ''}`.trim(), 'data-identity': c.identity, title: c.detail },
    el('span', { class: 'who' }, c.identity),
    meter,
    el('span', { class: 'dim' }, c.label),
    status,
  );
}

function section(
  id: string,
  heading: string,
): { box: HTMLElement; list: HTMLElement; badge: HTMLElement; empty: HTMLElement } {
  const badge = el('vscode-badge', { variant: 'counter', slot: 'decorations' });
  const list = el('div', { class: 'list', id: `${id}-list` });
  const empty = el('p', { class: 'empty dim' });
  const box = el('vscode-collapsible', { heading, open: '', id }, badge, list, empty);
  return { box, list, badge, empty };
}

const root = document.getElementById('root')!;
const hubLine = el('div', { class: 'hub-line' });
// The one live region: a sentence that changes with the state (counts, the hub), never with the clock.
const announcer = el('div', { class: 'announcer', role: 'status', 'aria-live': 'polite' });
// The empty state: nothing sent and nobody connected — the first step is connecting an agent.
const welcome = el(
  'div',
  { class: 'welcome', hidden: '' },
  el(
    'p',
    {},
    'No agent is connected to this repository yet. Connect an agent CLI so it can send and receive handoffs.',
  ),
  el('vscode-button', { 'data-action': 'connect' }, 'Connect an Agent…'),
);
const matrixBox = el('section', { class: 'matrix', 'aria-label': 'Matrix link', hidden: '' });
const filterBar = el('div', { class: 'filter-bar', hidden: '' });
const inbox = section('inbox', 'Inbox');
const events = section('events', 'Events');
const pending = section('pending', 'Pending');
const sessions = section('sessions', 'Sessions');
const coverage = section('coverage', 'Coverage');
// Shown once a repository is linked (handoff link, or "Handoff: Link Repository").
const links = section('links', 'Linked Repositories');
links.box.hidden = true;
links.list.setAttribute('role', 'tree');
links.list.setAttribute('aria-label', 'Linked repositories');
const linksHere = el('p', { class: 'links-here dim' });
links.list.before(linksHere);
root.append(
  announcer,
  hubLine,
  welcome,
  matrixBox,
  filterBar,
  inbox.box,
  events.box,
  pending.box,
  sessions.box,
  links.box,
  coverage.box,
);
// The search box at the top; its results stand in for the lists while it holds text (search.ts).
const search = searchBox(host, el, root);
root.prepend(search.bar, search.results);

function renderHub(m: PanelUpdate): void {
  const storeBad = m.store && !m.store.ok;
  const tone =
    m.hub.state === 'down' || storeBad
      ? 'error'
      : m.hub.state === 'starting'
        ? 'muted'
        : m.overdueCount
          ? 'warn'
          : 'ok';
  const iconName =
    m.hub.state === 'down' ? 'error' : m.hub.state === 'starting' ? 'loading codicon-modifier-spin' : 'radio-tower';
  const text = storeBad ? `Store failing: ${m.store?.error ?? ''}` : m.hub.detail;
  const sig = `${tone}|${iconName}|${text}|${m.hub.tooltip ?? ''}`;
  if (hubLine.dataset.sig === sig) return;
  hubLine.dataset.sig = sig;
  hubLine.className = `hub-line tone-${tone}`;
  const tooltip = storeBad ? text : (m.hub.tooltip ?? text);
  hubLine.replaceChildren(icon(iconName), el('span', { class: 'hub-text', title: tooltip }, text));
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
  const outbox = el(
    'vscode-badge',
    { variant: x.outbox ? 'counter' : 'default', title: x.outboxLabel, class: 'outbox' },
    `outbox ${x.outbox}`,
  );
  const rows: HTMLElement[] = [
    el(
      'div',
      { class: `matrix-head tone-${x.tone}` },
      icon(x.icon),
      el('span', { class: 'matrix-state', title: x.headline }, `Matrix ${x.state}`),
      outbox,
    ),
    el(
      'div',
      { class: 'matrix-detail' },
      icon('account', 'dim'),
      el('span', { class: 'matrix-user' }, x.userId ?? 'signing in…'),
      el('span', { class: 'dim' }, 'in'),
      el('span', { class: 'matrix-room', title: x.room ?? '' }, x.room ?? ''),
    ),
    el(
      'div',
      { class: 'matrix-detail dim' },
      icon('server'),
      el('span', { class: 'matrix-homeserver', title: x.homeserver }, x.homeserver),
      el('span', { class: 'matrix-sync' }, `· ${x.lastSyncLabel}`),
    ),
  ];
  rows.push(
    el(
      'div',
      {
        class: `matrix-detail matrix-encryption${x.encryption.on ? '' : ' dim'}`,
        title: [x.encryption.label, ...x.encryption.devices].join('\n'),
      },
      icon(x.encryption.on ? 'lock' : 'unlock'),
      el('span', {}, x.encryption.label),
    ),
  );
  if (x.error)
    rows.push(el('div', { class: 'matrix-error', title: x.error }, icon('warning'), el('span', {}, x.error)));
  for (const n of x.notices)
    rows.push(el('div', { class: 'matrix-error matrix-notice', title: n }, icon('shield'), el('span', {}, n)));
  if (x.droppedLabel)
    rows.push(
      el(
        'div',
        { class: 'matrix-detail dim matrix-dropped', title: x.droppedLabel },
        icon('filter'),
        el('span', {}, x.droppedLabel),
      ),
    );
  matrixBox.replaceChildren(...rows);
}

function renderFilter(m: PanelUpdate): void {
  const sig = `${m.filter}|${m.overdueCount}`;
  if (filterBar.dataset.sig === sig) return;
  filterBar.dataset.sig = sig;
  if (m.filter === 'all') {
    filterBar.hidden = true;
    filterBar.replaceChildren();
    return;
  }
  filterBar.hidden = false;
  filterBar.replaceChildren(
    icon('filter'),
    el('span', {}, `Showing ${m.overdueCount} overdue`),
    el('a', { href: '#', 'data-action': 'filter', 'data-filter': 'all' }, 'Show all'),
  );
}

function render(m: PanelUpdate): void {
  clockOffset = m.now - Date.now();
  renderHub(m);
  renderMatrix(m.matrix);
  renderFilter(m);
  reconcile(inbox.list, m.inbox.rows, (i) => i.id, inboxRow);
  inbox.badge.textContent = String(m.inbox.unread);
  inbox.badge.title = `${m.inbox.unread} unread for ${m.inbox.identity}`;
  inbox.box.setAttribute('heading', `Inbox · ${m.inbox.identity}`);
  inbox.empty.textContent = m.inbox.rows.order.length
    ? ''
    : `Nothing for ${m.inbox.identity}. Handoffs agents send to you land here.`;
  reconcile(events.list, m.events, (e) => e.id, eventRow);
  events.badge.textContent = String(m.events.order.length);
  events.empty.textContent = m.events.order.length
    ? ''
    : m.filter === 'overdue'
      ? 'Nothing is overdue.'
      : 'No handoffs yet. Agents connect through the Handoff MCP server; "Send Handoff…" starts one from here.';
  reconcile(pending.list, m.pending, (e) => e.id, pendingRow);
  pending.badge.textContent = String(m.pending.order.length);
  pending.empty.textContent = m.pending.order.length ? '' : 'Every handoff is acknowledged.';
  reconcile(sessions.list, m.sessions, (s) => s.label, sessionRow);
  sessions.badge.textContent = String(m.sessions.order.length);
  sessions.empty.textContent = m.sessions.order.length ? '' : 'No agent is connected.';
  reconcile(coverage.list, m.coverage, (c) => c.identity, coverageRow);
  coverage.badge.textContent = m.ghostCount
    ? `${m.ghostCount} ghost${m.ghostCount > 1 ? 's' : ''}`
    : String(m.coverage.order.length);
  coverage.empty.textContent = m.coverage.order.length ? '' : 'No identities yet.';
  reconcile(
    links.list,
    m.links.rows,
    (l) => l.root,
    (l) => linkRow(el, l),
  );
  links.badge.textContent = String(m.links.rows.order.length);
  links.box.hidden = m.links.rows.order.length === 0;
  const here = `This repository is ${m.links.name}: its agents are NAME@${m.links.name} there.`;
  if (linksHere.textContent !== here) linksHere.textContent = here;
  welcome.hidden = m.hub.state !== 'running' || m.events.order.length > 0 || m.sessions.order.length > 0;
  announce(m);
  tick();
}

function announce(m: PanelUpdate): void {
  const text = [
    m.store && !m.store.ok ? `Store failing: ${m.store.error ?? ''}` : m.hub.detail,
    `${m.events.order.length} handoffs`,
    `${m.waiting.ack} waiting for an ACK`,
    `${m.waiting.result} ACKed, waiting for a result`,
    `${m.overdueCount} overdue`,
    `${m.inbox.unread} unread for you`,
    `${m.sessions.order.length} agent sessions`,
  ].join(', ');
  if (announcer.textContent !== text) announcer.textContent = text;
}

// Only the countdown texts change with time; nothing else is touched between models.
function tick(): void {
  for (const c of Array.from(document.querySelectorAll<HTMLElement>('.countdown[data-due]'))) {
    if (!c.dataset.due) continue;
    const text = dueText(Number(c.dataset.due));
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
  if (act === 'inbox') host.postMessage({ type: 'inbox', act: (target.dataset.act ?? 'open') as InboxAct, id });
  else if (act === 'filter')
    host.postMessage({ type: 'filter', filter: target.dataset.filter === 'overdue' ? 'overdue' : 'all' });
  else if (act === 'connect') host.postMessage({ type: 'connect' });
  else if (act === 'unlink') host.postMessage({ type: 'unlink', root: target.dataset.root ?? '' });
  else if (act === 'open' || act === 'copyId' || act === 'chase' || act === 'resolve')
    host.postMessage({ type: act, id });
});

// Enter on a focused event opens it, like a list item in the editor.
document.addEventListener('keydown', (ev) => {
  const mail = (ev.target as HTMLElement).closest<HTMLElement>('article.inbox-row');
  const act = INBOX_KEYS[ev.key.length === 1 ? ev.key.toLowerCase() : ev.key];
  if (mail?.dataset.id && ev.target === mail && act && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
    ev.preventDefault();
    host.postMessage({ type: 'inbox', act, id: mail.dataset.id });
    return;
  }
  const row = (ev.target as HTMLElement).closest<HTMLElement>('article.event');
  if (ev.key === 'Enter' && row?.dataset.id && ev.target === row)
    host.postMessage({ type: 'open', id: row.dataset.id });
});

window.addEventListener('message', (ev: MessageEvent<HostToPanel>) => {
  if (ev.data?.type === 'update') render(ev.data.update);
  else if (ev.data?.type === 'searchResults') search.show(ev.data.results);
});
host.postMessage({ type: 'ready' });

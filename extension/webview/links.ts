// The view's Linked Repositories (runs in the webview): one tree item per linked repository — its
// short name, whether its hub answers, what waits for it — and under it its agents with their
// liveness. Everything here but the folder came from the other repository's hub: text only.
import type { LinkRowView } from '../protocol/panel';

type Child = Node | string | undefined | false;
type El = (tag: string, attrs?: Record<string, string | undefined>, ...children: Child[]) => HTMLElement;

export function linkRow(el: El, l: LinkRowView): HTMLElement {
  const icon = (name: string, cls = '') =>
    el('i', { class: `codicon codicon-${name} ${cls}`.trim(), 'aria-hidden': 'true' });
  const head = el(
    'div',
    { class: `link-head tone-${l.tone}`, title: l.detail },
    icon('repo', 'dim'),
    el('span', { class: 'link-name' }, l.name),
    icon(l.icon, 'link-state-icon'),
    l.queued > 0 &&
      el(
        'vscode-badge',
        { variant: 'counter', class: 'link-queued', title: `${l.queuedLabel} in this hub's outbox` },
        String(l.queued),
      ),
    el(
      'span',
      { class: 'actions' },
      l.canUnlink &&
        el('vscode-icon', {
          name: 'debug-disconnect',
          'action-icon': '',
          label: `Unlink ${l.name}…`,
          title: `Unlink ${l.name}…`,
          'data-action': 'unlink',
          'data-root': l.root,
        }),
    ),
  );
  // The tree item's description: the state and the queue in words, under the name.
  const description = el(
    'div',
    { class: `link-description tone-${l.tone}`, title: l.detail },
    el('span', { class: 'link-state' }, l.stateLabel),
    el('span', { class: 'link-queue' }, ` · ${l.queuedLabel}`),
  );
  const agents = l.agents.map((a) =>
    el(
      'li',
      { class: 'link-agent', 'data-address': a.address, title: `${a.address}: ${a.label}` },
      icon(a.live ? 'circle-filled' : 'circle-outline', a.live ? 'live' : 'dim'),
      el('span', { class: 'who' }, a.name, el('span', { class: 'dim' }, `@${l.name}`)),
      el('span', { class: a.live ? 'live-count' : 'dim' }, a.label),
    ),
  );
  return el(
    'div',
    {
      class: `link-row state-${l.state}`,
      'data-root': l.root,
      'data-state': l.state,
      role: 'treeitem',
      'aria-expanded': agents.length ? 'true' : undefined,
      'aria-label': `${l.name}: ${l.stateLabel}, ${l.queuedLabel}`,
      tabindex: '0',
    },
    head,
    description,
    agents.length
      ? el('ul', { class: 'link-agents', role: 'group' }, ...agents)
      : el('div', { class: 'link-agents empty-agents dim' }, l.state === 'linked' ? 'no agents yet' : ''),
  );
}

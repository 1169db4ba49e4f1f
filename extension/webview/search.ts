// The Handoff view's search box: a filter field at the top of the view, like the Extensions view's,
// whose results take the place of the lists while it holds text. Typing is debounced; Escape clears;
// each answer names the request it answers, so a late one never overwrites a newer. Hits are
// rendered as text only (every field came from an agent), and open like the Events rows.
import { clock } from '../shared/format';
import type { PanelToHost, SearchHitView, SearchResultsView } from '../protocol/panel';
import { SEARCH_TEXT_MAX } from '../protocol/panel';

type Host = { postMessage(m: PanelToHost): void };
type El = (
  tag: string,
  attrs?: Record<string, string | undefined>,
  ...children: (Node | string | undefined | false)[]
) => HTMLElement;

/** Typing pauses this long before the hub is asked. */
const DEBOUNCE_MS = 250;

/** Today: the time; earlier: the date too (history reaches back). */
function when(at: number): string {
  const d = new Date(at);
  if (d.toDateString() === new Date().toDateString()) return clock(at, false);
  return `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${clock(at, false)}`;
}

export interface SearchBox {
  /** The search bar and the results, to be put at the top of the view. */
  bar: HTMLElement;
  results: HTMLElement;
  /** An answer from the host. */
  show(r: SearchResultsView): void;
}

export function searchBox(host: Host, el: El, root: HTMLElement): SearchBox {
  const icon = (name: string, cls = '') =>
    el('i', { class: `codicon codicon-${name} ${cls}`.trim(), 'aria-hidden': 'true' });
  const input = el('input', {
    type: 'text',
    class: 'search-input',
    role: 'searchbox',
    placeholder: 'Search handoffs',
    'aria-label': 'Search handoffs, open and finished. Filters: from:name to:name thread:id state:settled',
    title: 'Words, and filters: from:builder to:reviewer thread:ID state:open|settled|done|stuck|failed…',
    maxlength: String(SEARCH_TEXT_MAX),
    spellcheck: 'false',
  }) as HTMLInputElement;
  const clear = el(
    'button',
    { class: 'search-clear', type: 'button', title: 'Clear Search (Escape)', 'aria-label': 'Clear search', hidden: '' },
    icon('close'),
  );
  const bar = el('div', { class: 'search-bar', role: 'search' }, icon('search', 'search-icon'), input, clear);
  const summary = el('div', { class: 'search-summary', role: 'status', 'aria-live': 'polite' });
  const list = el('div', { class: 'search-hits', role: 'list', 'aria-label': 'Search results' });
  const results = el('section', { class: 'search-results', 'aria-label': 'Search results', hidden: '' }, summary, list);

  let seq = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const hitRow = (h: SearchHitView): HTMLElement =>
    el(
      'article',
      {
        class: `search-hit${h.settled ? ' settled' : ''}`,
        role: 'listitem',
        tabindex: '0',
        'data-id': h.id,
        title: `${h.id}\nthread ${h.thread}\nsent ${new Date(h.sentAt).toLocaleString()}`,
        'aria-label': `${h.from} to ${h.to.join(', ')}, ${h.stateLabel}: ${h.excerpt}`,
      },
      el(
        'div',
        { class: 'head' },
        el('span', { class: 'from' }, h.from),
        icon('arrow-small-right', 'dim'),
        el('span', { class: 'to' }, h.to.join(', ')),
        el('span', { class: 'when' }, when(h.sentAt)),
        el(
          'span',
          { class: 'actions' },
          el('vscode-icon', {
            name: 'go-to-file',
            'action-icon': '',
            label: 'Open message',
            title: 'Open message',
            'data-action': 'open',
            'data-id': h.id,
          }),
        ),
      ),
      el('div', { class: 'preview' }, h.excerpt),
      el('div', { class: `hit-state tone-${h.tone}` }, icon(h.icon), el('span', { class: 'label' }, h.stateLabel)),
    );

  const searching = (on: boolean) => {
    root.classList.toggle('searching', on);
    results.hidden = !on;
    clear.hidden = !on;
  };

  const ask = () => {
    timer = undefined;
    const text = input.value.trim();
    seq++;
    if (!text) {
      searching(false);
      list.replaceChildren();
      summary.textContent = '';
      return;
    }
    searching(true);
    summary.className = 'search-summary dim';
    summary.textContent = 'Searching…';
    host.postMessage({ type: 'search', text, seq });
  };

  const reset = () => {
    if (timer) clearTimeout(timer);
    input.value = '';
    ask();
  };

  input.addEventListener('input', () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(ask, DEBOUNCE_MS);
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && input.value) {
      ev.preventDefault();
      reset();
    } else if (ev.key === 'Enter') {
      ev.preventDefault();
      if (timer) clearTimeout(timer);
      ask();
    } else if (ev.key === 'ArrowDown') {
      const first = list.querySelector<HTMLElement>('article.search-hit');
      if (first) {
        ev.preventDefault();
        first.focus();
      }
    }
  });
  clear.addEventListener('click', () => {
    reset();
    input.focus();
  });
  // On a hit: Enter opens it (the click on its Open action goes through the view's own handler),
  // arrows move between hits, Escape goes back to the box.
  list.addEventListener('keydown', (ev) => {
    const hit = (ev.target as HTMLElement).closest<HTMLElement>('article.search-hit');
    if (!hit || ev.target !== hit) return;
    if (ev.key === 'Enter' && hit.dataset.id) host.postMessage({ type: 'open', id: hit.dataset.id });
    else if (ev.key === 'ArrowDown') (hit.nextElementSibling as HTMLElement | null)?.focus();
    else if (ev.key === 'ArrowUp') ((hit.previousElementSibling as HTMLElement | null) ?? input).focus();
    else if (ev.key === 'Escape') input.focus();
    else return;
    ev.preventDefault();
  });

  return {
    bar,
    results,
    show(r) {
      if (r.seq !== seq) return; // an answer to an older text
      summary.className = r.error ? 'search-summary search-error' : 'search-summary dim';
      summary.textContent = r.error ?? r.summary;
      list.replaceChildren(...r.hits.map(hitRow));
    },
  };
}

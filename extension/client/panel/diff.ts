// The host→webview update, keyed: each list goes as its order of keys plus only the rows that
// changed since the last post, so one new receipt posts one row, not the whole model. The state
// is what the view holds now; a new or reloaded view starts from nothing (reset).
import type { ListPatch, PanelModel, PanelUpdate } from '../../protocol/panel';

export class PanelDiff {
  /** Per list, each row's key → its last posted form. */
  private readonly posted = new Map<string, Map<string, string>>();

  reset(): void {
    this.posted.clear();
  }

  update(m: PanelModel): PanelUpdate {
    const { inbox, events, pending, sessions, coverage, ghosts, links, ...rest } = m;
    return {
      ...rest,
      inbox: { identity: inbox.identity, unread: inbox.unread, rows: this.list('inbox', inbox.rows, (i) => i.id) },
      events: this.list('events', events, (e) => e.id),
      pending: this.list('pending', pending, (e) => e.id),
      sessions: this.list('sessions', sessions, (s) => s.label),
      coverage: this.list('coverage', coverage, (c) => c.identity),
      ghostCount: ghosts.length,
      links: { name: links.name, rows: this.list('links', links.rows, (l) => l.root) },
    };
  }

  private list<T>(name: string, items: T[], key: (t: T) => string): ListPatch<T> {
    const before = this.posted.get(name) ?? new Map<string, string>();
    const now = new Map<string, string>();
    const changed: T[] = [];
    for (const t of items) {
      const k = key(t);
      const form = JSON.stringify(t);
      now.set(k, form);
      if (before.get(k) !== form) changed.push(t);
    }
    this.posted.set(name, now);
    return { order: [...now.keys()], changed };
  }
}

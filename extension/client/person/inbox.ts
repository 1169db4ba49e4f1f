// The person's own inbox, read from the hub's snapshot: every window of that hub sees the same
// (a read receipt written in one is in the next snapshot of all).
import type { PersonInboxItem, PersonView, Snapshot } from '../../protocol/views';
import type { QuickPickItem } from 'vscode';
import { clock, plural } from '../../shared/format';
import { inertLinks } from '../inertLinks';

export function personView(snapshot: Snapshot | undefined, identity: string): PersonView | undefined {
  return snapshot?.people?.find((p) => p.identity === identity);
}

export function inboxItems(snapshot: Snapshot | undefined, identity: string): PersonInboxItem[] {
  return personView(snapshot, identity)?.inbox ?? [];
}

export function unreadCount(snapshot: Snapshot | undefined, identity: string): number {
  return personView(snapshot, identity)?.unread ?? 0;
}

/** The Handoff icon's badge: the person's unread count, none at zero (a `vscode.ViewBadge`). */
export function unreadBadge(
  snapshot: Snapshot | undefined,
  identity: string,
): { value: number; tooltip: string } | undefined {
  const unread = unreadCount(snapshot, identity);
  return unread ? { value: unread, tooltip: `${plural(unread, 'unread handoff')} for ${identity}` } : undefined;
}

/** One line naming a handoff for the person: who, and what (an escalation says who went silent). */
export function inboxHeadline(i: PersonInboxItem): string {
  return i.escalation
    ? `Escalation: ${i.escalation.silent} has not acknowledged ${i.from}'s handoff`
    : `${i.from}: ${i.preview}`;
}

/** The notification's text: untrusted, so links are made inert (VS Code renders `[x](command:…)`). */
export function arrivalText(i: PersonInboxItem): string {
  // An escalation's body starts with the same sentence: the headline is enough.
  return inertLinks(
    i.escalation ? `Handoff ${inboxHeadline(i)}, chased and still silent.` : `Handoff from ${i.from}: "${i.preview}"`,
  );
}

/**
 * Which unread items are new since the last look. The first look (also after a change of
 * identity) only learns the mail that was there before this window watched for it: a handoff
 * sent after that is new, even if it arrives with the person's first snapshot.
 */
export class Arrivals {
  private seen?: Set<string>;
  private identity?: string;
  private since: number;

  constructor(private readonly now: () => number = Date.now) {
    this.since = now();
  }

  fresh(identity: string, items: PersonInboxItem[] | undefined): PersonInboxItem[] {
    if (identity !== this.identity) {
      if (this.identity !== undefined) this.since = this.now();
      this.seen = undefined;
      this.identity = identity;
    }
    if (!items) return [];
    const first = !this.seen;
    const seen = (this.seen ??= new Set());
    const fresh = items.filter((i) => !seen.has(i.id) && i.unread && (!first || i.sentAt >= this.since));
    for (const i of items) seen.add(i.id);
    return fresh;
  }
}

export interface ItemPick extends QuickPickItem {
  id: string;
}

/** "Open Inbox…" rows: unread marked, escalations flagged. */
export function inboxPicks(items: PersonInboxItem[]): ItemPick[] {
  return items.map((i) => ({
    id: i.id,
    label: `${i.unread ? '$(circle-filled)' : '$(circle-outline)'} ${i.escalation ? `$(warning) ${inboxHeadline(i)}` : i.from}`,
    description: `${i.unread ? 'unread · ' : `${i.state} · `}${clock(i.sentAt)}`,
    detail: i.preview,
  }));
}

// The view's Linked Repositories: each repository linked to this one, from the hub's snapshot —
// whether its hub answers now, its agents with their liveness, what waits for it in the outbox.
// Names and agents come from the other hub: the webview draws them as text only.
import { basename } from 'node:path';
import type { LinksView, LinkView } from '../../protocol/link';
import type { LinkRowView, Tone } from '../../protocol/panel';
import { plural } from '../../shared/format';

const LOOK: Record<LinkView['state'], { icon: string; tone: Tone; label: string }> = {
  linked: { icon: 'link', tone: 'ok', label: 'hub reachable' },
  waiting: { icon: 'watch', tone: 'warn', label: 'waiting for it to link back' },
  down: { icon: 'debug-disconnect', tone: 'muted', label: 'hub not running' },
  refused: { icon: 'error', tone: 'error', label: 'refused' },
  unlinked: { icon: 'circle-slash', tone: 'muted', label: 'unlinked here' },
};

/** What the state means for what is sent to it, for the tooltip. */
const MEANS: Record<LinkView['state'], string> = {
  linked: 'Both sides linked and its hub answers: handoffs to it are delivered now.',
  waiting: 'Its hub answers but has not linked this repository: nothing flows until it does.',
  down: 'Its hub is not running: handoffs to it wait in the outbox and go when it starts.',
  refused: 'Its hub refused the link or answered with another key: nothing flows.',
  unlinked: 'Unlinked here: nothing flows; what waits for it stays in the outbox until it is linked again.',
};

function row(l: LinkView): LinkRowView {
  const look = LOOK[l.state];
  const name = l.name ?? basename(l.root);
  const agents = [...l.peers]
    .sort((a, b) => b.live_sessions - a.live_sessions || a.name.localeCompare(b.name))
    .map((p) => ({
      address: `${p.name}@${name}`,
      name: p.name,
      live: p.live_sessions,
      label: p.live_sessions ? `${p.live_sessions} live` : 'offline',
    }));
  const detail = [
    `${name}: ${l.root}`,
    `${l.state}${l.error ? `: ${l.error}` : ''}`,
    MEANS[l.state],
    l.outbox ? `${plural(l.outbox, 'item')} for it in this hub's outbox` : undefined,
    l.key ? `its hub's key ${l.key.slice(-16)}, recorded at the first agreed contact` : undefined,
    `linked here ${new Date(l.linkedAt).toLocaleString()}`,
  ]
    .filter(Boolean)
    .join('\n');
  return {
    root: l.root,
    name,
    state: l.state,
    reachable: l.state === 'linked' || l.state === 'waiting',
    stateLabel: look.label,
    icon: look.icon,
    tone: look.tone,
    queued: l.outbox,
    queuedLabel: l.outbox ? `${l.outbox} queued` : 'nothing queued',
    agents,
    detail,
    canUnlink: l.state !== 'unlinked',
  };
}

export function linksModel(v: LinksView | undefined): { name: string; rows: LinkRowView[] } {
  return { name: v?.name ?? '', rows: (v?.links ?? []).map(row) };
}

// The Matrix link's status in words and icons, shared by the status bar and the panel. Plain
// functions over the hub's LinkStatus.
import type { LinkStatus } from '../../protocol/views';
import type { Tone } from '../../protocol/panel';
import { clock } from '../../shared/format';

export function linkHeadline(r: LinkStatus): string {
  switch (r.state) {
    case 'connected':
      return `Matrix connected as ${r.userId ?? '?'} in ${r.room ?? '?'}`;
    case 'connecting':
      return `Matrix connecting to ${r.homeserver}…`;
    case 'retrying':
      return `Matrix retrying ${r.homeserver}: ${r.error ?? 'unreachable'}`;
    case 'refused':
      return `Matrix refused by ${r.homeserver}: ${r.error ?? 'no reason given'}`;
    case 'stopped':
      return 'Matrix link stopped';
  }
}

export function outboxLabel(r: LinkStatus): string {
  return r.outbox ? `outbox ${r.outbox} (not on the homeserver yet)` : 'outbox empty';
}

export function lastSyncLabel(r: LinkStatus): string {
  return r.lastSyncAt ? `last sync ${clock(r.lastSyncAt)}` : 'not synced yet';
}

/** The short mark after "Handoff" in the status bar. */
export function linkBadge(r: LinkStatus): string {
  if (r.state === 'retrying' || r.state === 'refused') return `$(debug-disconnect) Matrix ${r.state}`;
  if (r.state === 'stopped') return '$(debug-disconnect) Matrix stopped';
  if (r.outbox) return `$(cloud-upload) ${r.outbox}`;
  return r.state === 'connecting' ? '$(cloud) …' : '$(cloud)';
}

export function linkTooltip(r: LinkStatus): string {
  return [linkHeadline(r), `${outboxLabel(r)} · ${lastSyncLabel(r)}`].join('\n');
}

export function linkLook(r: LinkStatus): { icon: string; tone: Tone } {
  if (r.state === 'connected') return { icon: r.outbox ? 'cloud-upload' : 'cloud', tone: 'ok' };
  if (r.state === 'connecting') return { icon: 'cloud', tone: 'muted' };
  if (r.state === 'retrying') return { icon: 'debug-disconnect', tone: 'warn' };
  return { icon: 'debug-disconnect', tone: 'error' };
}

/** "@bob:example.org 14:03:12, @carol:example.org 14:05:40" */
export function advisoryReadsLabel(reads: LinkStatus['advisoryReads'][string]): string {
  return reads.map((r) => `${r.user} ${clock(r.at)}`).join(', ');
}

/** Room events the hub did not take, by why — e.g. "3 room events not taken: forged_node 2, not_allowed 1". */
export function droppedLabel(r: LinkStatus): string | undefined {
  const counts = Object.entries(r.dropped ?? {})
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  if (counts.length === 0) return undefined;
  const total = counts.reduce((sum, [, n]) => sum + n, 0);
  return `${total} room event${total === 1 ? '' : 's'} not taken: ${counts.map(([why, n]) => `${why.replace(/_/g, ' ')} ${n}`).join(', ')}`;
}

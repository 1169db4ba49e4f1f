// The linked repositories in words, one line each, for `handoff link` and `handoff status`.
import type { LinksView } from '../protocol/link';

const STATE_TEXT = {
  linked: 'linked',
  waiting: 'linked here, NOT there yet: run `handoff link` with this repository in it',
  down: 'linked; its hub is not running (what is sent waits here and is delivered when it starts)',
  refused: 'REFUSED',
  unlinked: 'unlinked (what waits for it stays in the outbox)',
} as const;

export function linkLines(v: LinksView): string[] {
  return v.links.map((l) => {
    const peers = l.peers.length
      ? ` · ${l.peers.map((p) => `${p.name}@${l.name}${p.live_sessions ? ` (${p.live_sessions} live)` : ''}`).join(', ')}`
      : '';
    const error = l.error && l.state !== 'down' ? ` (${l.error})` : '';
    return `  link ${l.name ?? '(name not known yet)'} ${l.root}: ${STATE_TEXT[l.state]}${error} · outbox ${l.outbox}${peers}`;
  });
}

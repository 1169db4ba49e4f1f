// Which handoffs still have to reach a session's model, and the record that one did (G8). Plain
// functions over data: the hub adds the clock, the claims in flight and the hook sessions.
import { awaitingAck } from './deliveryState';
import type { BusEvent, HotMessage, SurfacePath } from './model';

/** Of an identity's open mail (oldest first), what has not entered `session`'s model context yet. */
export function unsurfacedFor(
  mail: HotMessage[],
  identity: string,
  session: string,
  claimed: (id: string) => boolean,
): HotMessage[] {
  const out: HotMessage[] = [];
  for (const hot of mail) {
    const d = hot.deliveries[identity];
    if (!d || hot.resolution || !awaitingAck(d) || claimed(hot.message.id)) continue;
    if (d.surfacings?.some((s) => s.session === session)) continue;
    out.push(hot);
  }
  return out;
}

/** A replay when the identity's model saw it before (another session, or before a restart). */
export function surfacedEvent(
  hot: HotMessage,
  identity: string,
  stamp: {
    session: string;
    node: string;
    at: number;
    path: SurfacePath;
    via: string;
    cliSession?: string;
    underNoAgent?: true;
    stated?: true;
  },
): Extract<BusEvent, { type: 'surfaced' }> {
  const replayed = (hot.deliveries[identity].surfacings?.length ?? 0) > 0;
  return { type: 'surfaced', id: hot.message.id, recipient: identity, surfacing: { ...stamp, replayed } };
}

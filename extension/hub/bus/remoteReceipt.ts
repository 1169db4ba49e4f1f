// A receipt from another node (over Matrix or a local link) for a handoff this node sent, as the
// bus event it becomes: only for a handoff whose sender is here, only by one of its recipients,
// and never twice (G3). The transport has already checked who sent it.
import { isRemote, localize } from './relay';
import type { BusEvent, BusState, Receipt, SurfacePath } from './model';

/** A receipt as it arrives: names qualified (`name@node`), `node` the recipient's. */
export interface RemoteReceipt {
  message_id: string;
  /** The handoff's sender, qualified as the recipient's node sees it. */
  sender: string;
  kind: Receipt['kind'] | 'pushed' | 'surfaced';
  by: string;
  session: string;
  node: string;
  at: number;
  outcome?: Receipt['outcome'];
  summary?: string;
  path?: SurfacePath;
  via?: string;
}

/**
 * The event the receipt adds, `undefined` when it is not this node's (another sender's, or a
 * copy already recorded), or `not_a_recipient` when it names someone the handoff is not for.
 */
export function remoteReceiptEvent(
  state: BusState,
  w: RemoteReceipt,
  node: string,
  via = 'another node',
): BusEvent | 'not_a_recipient' | undefined {
  const hot = state.hot[w.message_id];
  if (!hot || localize(w.sender, node) !== hot.message.from || isRemote(hot.message.from)) return undefined;
  const d = hot.deliveries[w.by];
  if (!d) return 'not_a_recipient';
  if (w.kind === 'pushed') {
    if (d.pushes.some((p) => p.session === w.session && p.node === w.node && p.at === w.at)) return undefined;
    return {
      type: 'pushed',
      id: w.message_id,
      recipient: w.by,
      push: { session: w.session, node: w.node, at: w.at, kind: 'live' },
    };
  }
  if (w.kind === 'surfaced') {
    if ((d.surfacings ?? []).some((x) => x.session === w.session && x.node === w.node && x.at === w.at))
      return undefined;
    return {
      type: 'surfaced',
      id: w.message_id,
      recipient: w.by,
      surfacing: {
        session: w.session,
        node: w.node,
        at: w.at,
        path: w.path ?? 'tool_result',
        via: w.via ?? via,
        replayed: false,
      },
    };
  }
  if (d.receipts.some((r) => r.kind === w.kind && r.session === w.session && r.at === w.at)) return undefined;
  return {
    type: 'receipt',
    id: w.message_id,
    recipient: w.by,
    receipt: {
      kind: w.kind,
      by: w.by,
      session: w.session,
      node: w.node,
      at: w.at,
      channel: 'remote',
      outcome: w.outcome,
      summary: w.summary,
    },
  };
}

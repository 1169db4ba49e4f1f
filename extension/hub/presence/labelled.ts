// What leaves the hub for other clients (control views, the panel, other nodes) names a session by
// its label. A live session's key is its secret: a hello presenting it takes the session over, so
// only the session itself is ever shown it (whoami).
import type { Delivery, Message } from '../../protocol/model';
import type { MessageView } from '../../protocol/views';
import { sessionLabel } from './sessions';

export function labelledDelivery(d: Delivery): Delivery {
  return {
    ...d,
    pushes: d.pushes.map((p) => ({ ...p, session: sessionLabel(p.session) })),
    ...(d.surfacings ? { surfacings: d.surfacings.map((s) => ({ ...s, session: sessionLabel(s.session) })) } : {}),
    ...(d.wakes ? { wakes: d.wakes.map((w) => ({ ...w, session: sessionLabel(w.session) })) } : {}),
    receipts: d.receipts.map((r) => ({ ...r, session: sessionLabel(r.session) })),
  };
}

export function labelledMessage(m: Message): Message {
  return { ...m, sentBySession: sessionLabel(m.sentBySession) };
}

export function labelledView(v: MessageView): MessageView {
  return { ...v, message: labelledMessage(v.message), deliveries: v.deliveries.map(labelledDelivery) };
}

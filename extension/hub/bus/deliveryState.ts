// Where one delivery stands, as predicates the ledger, escalation, surfacing and the mail index
// share (a file of its own, so none of them imports another for it).
import type { Delivery } from './model';

export function awaitingAck(d: Delivery): boolean {
  return d.state === 'queued' || d.state === 'pushed' || d.state === 'surfaced' || d.state === 'read';
}

/** Not yet read by the recipient (it may have surfaced in its model's context). */
export function isUnread(d: Delivery): boolean {
  return d.state === 'queued' || d.state === 'pushed' || d.state === 'surfaced';
}

// A message as the store keeps it, for the store's tests and benches: numbered so that ids sort by
// number, from alice to bob unless told otherwise, and the recipient's "done" that settles it.
import type { BusEvent, Message } from '../../extension/hub/bus/model';

export interface StoredMessageOptions {
  from?: string;
  to?: string;
  thread?: string;
  body?: string;
  sentAt?: number;
}

export function storedMessage(i: number, o: StoredMessageOptions = {}): Message {
  const to = o.to ?? 'bob';
  return {
    id: `01JD3V7W2K8Q5X9Y4Z${String(i).padStart(8, '0')}`,
    seq: i,
    from: o.from ?? 'alice',
    address: [to],
    recipients: [to],
    thread: o.thread ?? 't',
    body: o.body ?? `message ${i}`,
    attachments: [],
    requiresAck: true,
    slaMs: 60_000,
    ttlMs: 3_600_000,
    sentAt: o.sentAt ?? Date.now(),
    sentBySession: 's',
    node: 'n',
  };
}

/** The recipient's "done" result for `m`. */
export function doneReceipt(m: Message, at = Date.now()): BusEvent {
  const by = m.recipients[0];
  return {
    type: 'receipt',
    id: m.id,
    recipient: by,
    receipt: { kind: 'result', outcome: 'done', by, session: 's', node: 'n', at },
  };
}

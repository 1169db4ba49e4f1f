// The Matrix outbox on its own, against a homeserver a test stands in for: room `!room:test`,
// nothing logged or reported.
import type { Hub } from '../../extension/hub/hub';
import type { Homeserver } from '../../extension/hub/matrix/homeserver';
import { Outbox } from '../../extension/hub/matrix/outbox';

export function outboxFor(hub: Hub, hs: Pick<Homeserver, 'send'>): Outbox {
  return new Outbox(hub, (type, txnId, content) => hs.send('!room:test', type, txnId, content), 50, undefined, {
    log: () => undefined,
    onTrouble: () => undefined,
    onSuccess: () => undefined,
  });
}

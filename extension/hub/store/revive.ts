// Which parts of what the store reads back are name-keyed records (keys chosen by agents and
// remote accounts): those, and only those, become dicts with no prototype. Everything else has a
// fixed shape that our code alone names, and stays a plain (fast, compact) object.
import { asDict } from '../bus/dict';
import type { BusState, HotMessage } from '../bus/model';

export function reviveHot<T extends HotMessage>(hot: T): T {
  asDict(hot.deliveries);
  return hot;
}

export function reviveState(state: BusState): BusState {
  for (const hot of Object.values(asDict(state.hot))) reviveHot(hot);
  asDict(state.identities);
  asDict(state.coverage);
  asDict(state.idempotency);
  if (state.relay) {
    asDict(state.relay.outbox);
    asDict(state.relay.rooms);
  }
  return state;
}

// Which parts of what the store reads back are name-keyed records (keys chosen by agents and
// remote accounts): those, and only those, become dicts with no prototype. Everything else has a
// fixed shape that our code alone names, and stays a plain (fast, compact) object.
import { compactHot } from '../bus/compact';
import { asDict } from '../bus/dict';
import type { BusState, HotMessage } from '../bus/model';

/** `id`: the message's id as already held (the hot key), so the message shares it. */
export function reviveHot<T extends HotMessage>(hot: T, id?: string): T {
  asDict(hot.deliveries);
  return compactHot(hot, id);
}

export function reviveState(state: BusState): BusState {
  const hot = asDict(state.hot);
  for (const id in hot) reviveHot(hot[id], id);
  asDict(state.identities);
  asDict(state.coverage);
  asDict(state.idempotency);
  if (state.relay) {
    asDict(state.relay.outbox);
    asDict(state.relay.rooms);
  }
  return state;
}

// The bus state as plain JSON, each open message's body read back from wherever the store holds
// it (in memory or left in the checkpoint): two states compare equal when their data is.
import { withBody } from '../../extension/hub/bus/body';
import type { BusState } from '../../extension/hub/bus/model';

export const plainState = (state: BusState): unknown =>
  JSON.parse(
    JSON.stringify({
      ...state,
      hot: Object.fromEntries(Object.entries(state.hot).map(([id, h]) => [id, { ...h, message: withBody(h.message) }])),
    }),
  );

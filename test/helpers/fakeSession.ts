// A live MCP session as the hub holds it, without a socket: for tests that drive a Hub in process.
import type { Session } from '../../extension/hub/presence/sessions';

/** Open, taking every push; `over` sets what a test needs (an agent process, a client, a delivery). */
export function fakeSession(identity: string, key: string, over: Partial<Session> = {}): Session {
  return {
    key,
    identity,
    roles: [],
    client: 'test',
    connectedAt: 0,
    lastSeen: 0,
    pushed: new Set(),
    isOpen: () => true,
    deliver: () => true,
    close: () => undefined,
    ...over,
  };
}

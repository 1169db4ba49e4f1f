// G2 at the hub, in process: a session attaching while sends to its identity are being committed
// (its replay and the sends' own pushes race in one group commit) gets each message exactly once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import type { PushPayload, Session } from '../../extension/hub/sessions';
import { tempDir } from '../helpers/hubProcess';

function fakeSession(key: string, identity: string, roles: string[], got: PushPayload[]): Session {
  return {
    key, identity, roles, client: 'test', connectedAt: Date.now(), lastSeen: Date.now(), pushed: new Set(),
    isOpen: () => true, deliver: (p) => (got.push(p), true), close: () => undefined,
  };
}

describe('one push per message per session', () => {
  it('a session attaching amid concurrent sends gets each exactly once', async () => {
    const hub = new Hub({ workspace: tempDir('push-ws'), storeDir: tempDir('push-store'), node: 'n' });
    await hub.start();
    try {
      await hub.remember('alice');
      await hub.remember('bob');
      const alice = { identity: 'alice', session: 'a-1', node: 'n' };
      for (let round = 0; round < 10; round++) {
        const got: PushPayload[] = [];
        // One send occupies the journal; the attach (new roles: it writes its identity record) and
        // twenty sends then share the next group commit, the attach first: its replay sees the
        // twenty committed before their own pushes run.
        const first = hub.send(alice, { to: ['bob'], body: `round ${round} opener`, insist: true });
        const attaching = hub.attach(fakeSession(`bob-${round}`, 'bob', [`role${round}`], got));
        const sends = Array.from({ length: 20 }, (_, i) => hub.send(alice, { to: ['bob'], body: `round ${round} #${i}`, insist: true }));
        await Promise.all([first, attaching, ...sends]);
        const ids = got.map((p) => p.id).filter(Boolean);
        assert.equal(ids.length, new Set(ids).size, `round ${round}: no message pushed twice to one session (${ids.length} pushes)`);
        hub.detach(hub.sessions.forIdentity('bob')[0]);
      }
    } finally {
      await hub.close();
    }
  });
});

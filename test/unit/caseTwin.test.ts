// G4 at the hub, in process: a name that differs from a known one only in case (`Bob` beside
// `bob`) never becomes a second identity — not through a session attaching, not when two attach
// at once, not when a person at the editor sends as it. Each refusal says why; nothing is stored.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BusError } from '../../extension/hub/bus/errors';
import { Hub } from '../../extension/hub/hub';
import type { Session } from '../../extension/hub/presence/sessions';
import { fakeSession } from '../helpers/fakeSession';
import { tempDir } from '../helpers/hubProcess';

const session = (key: string, identity: string): Session => fakeSession(identity, key);

const isCaseTwin = (e: unknown) =>
  e instanceof BusError && e.code === 'invalid_identity' && /only in case/.test(e.message);

async function withHub(name: string, body: (hub: Hub) => Promise<void>): Promise<void> {
  const hub = new Hub({ workspace: tempDir(`${name}-ws`), storeDir: tempDir(`${name}-store`), node: 'n', tickMs: 0 });
  await hub.start();
  try {
    await body(hub);
  } finally {
    await hub.close();
  }
}

describe('G4: case twins are refused at the hub', () => {
  it('a session named `Bob` beside a known `bob` is refused by attach and never listed', async () => {
    await withHub('twin-attach', async (hub) => {
      await hub.remember('bob');
      await assert.rejects(hub.attach(session('s-1', 'Bob')), isCaseTwin);
      assert.equal(hub.sessions.count('Bob'), 0);
      assert.deepEqual(Object.keys(hub.state.identities), ['bob']);
    });
  });

  it('`bob` and `Bob` attaching at the same moment: exactly one is registered', async () => {
    await withHub('twin-race', async (hub) => {
      for (const [first, second] of [
        ['bob', 'Bob'],
        ['carol', 'CAROL'],
      ]) {
        const results = await Promise.allSettled([
          hub.attach(session(`s-${first}`, first)),
          hub.attach(session(`s-${second}`, second)),
        ]);
        assert.equal(results[0].status, 'fulfilled');
        assert.equal(results[1].status, 'rejected');
        assert.ok(
          isCaseTwin((results[1] as PromiseRejectedResult).reason),
          String((results[1] as PromiseRejectedResult).reason),
        );
        assert.deepEqual([hub.sessions.count(first), hub.sessions.count(second)], [1, 0]);
        assert.equal(hub.state.identities[second], undefined, `${second} was never recorded`);
      }
    });
  });

  it('a person sending as `Bob` (the editor, the CLI) is refused before anything is sent', async () => {
    await withHub('twin-remember', async (hub) => {
      await hub.remember('bob');
      await hub.remember('alice');
      await assert.rejects(hub.remember('Bob'), isCaseTwin);
      assert.equal(hub.state.identities.Bob, undefined);
      assert.equal(hub.state.seq, 0, 'nothing was sent');
    });
  });
});

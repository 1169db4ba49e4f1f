// Memory follows what is open, never what was carried (#44): a hub whose heap is capped at 96 MB
// carries 3 000 handoffs of 32 KB (94 MiB) to a live recipient, each pushed and settled. Before,
// the duplicate window held every body it had carried for ten minutes (bus/recentSends.ts), and
// this hub died "JavaScript heap out of memory" on the way.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startHub } from '../helpers/hubProcess';
import { rawAgent } from '../helpers/rawAgent';
import { sendMany } from '../helpers/sendMany';
import { waitFor } from '../helpers/wait';

describe('memory and traffic carried', () => {
  it('a hub with a 96 MB heap carries 94 MiB of settled handoffs and lives', async () => {
    const hub = await startHub({ env: { NODE_OPTIONS: '--max-old-space-size=96' } });
    let died = '';
    hub.proc.once('exit', (code, signal) => (died = `the hub exited (${code ?? signal}):\n${hub.log().slice(-1500)}`));
    try {
      const bob = await rawAgent(hub.socket, { identity: 'bob' });
      await bob.initialize();
      const pushed = new Set<string>();
      bob.socket.on('data', () => {
        for (const m of bob.messages.splice(0))
          if (m.method === 'notifications/claude/channel') pushed.add(m.params.meta.message_id);
      });
      const alice = await rawAgent(hub.socket, { identity: 'alice' });
      await alice.initialize();
      const ids = await sendMany(alice, 'bob', 3000, 32_000, 8, false);
      await waitFor(
        () => pushed.size === ids.length || died !== '',
        60_000,
        () => `${ids.length} pushes (have ${pushed.size})`,
      );
      assert.equal(died, '');
      assert.equal(pushed.size, 3000);
      bob.close();
      alice.close();
    } finally {
      await hub.stop();
    }
  });
});

// Hub ownership under load: hub A is stopped (SIGSTOP) while four senders write to it and its
// accept queue is full, so a connect probe reads "nothing answers". A second hub for the same
// workspace must not take the socket over: it is refused, naming A, and once A runs again every
// acknowledged send is there — 0 lost, 0 duplicated.
import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { connectAgent, plainBody } from '../helpers/agent';
import { spawnHub, startHub } from '../helpers/hubProcess';
import { waitFor } from '../helpers/wait';

describe('a stalled hub keeps its socket', () => {
  it(
    'a second hub is refused while hub A is stopped under load; 0 acknowledged sends lost',
    { timeout: 120_000 },
    async () => {
      const a = await startHub();
      const bob = await connectAgent({ socket: a.socket, name: 'bob' });
      const senders = await Promise.all(
        [1, 2, 3, 4].map((i) => connectAgent({ socket: a.socket, name: `sender-${i}` })),
      );
      const acked: string[] = [];
      let sending = true;
      const loops = senders.map(async (s, i) => {
        for (let n = 0; sending; n++) {
          const body = `sender ${i} message ${n}`;
          const r = await s.call('send_handoff', { to: 'bob', body, requires_ack: true });
          if (!r.isError) acked.push(body);
        }
      });
      await waitFor(() => acked.length >= 20, 30_000, 'the senders busy'); // under load when it stops
      process.kill(a.proc.pid!, 'SIGSTOP');
      const flood: Socket[] = [];
      try {
        // Fill the stopped hub's accept queue: a probe then gets EAGAIN, as if nothing were there.
        let settled = 0;
        let refused = 0;
        for (let i = 0; i < 1200; i++) {
          const c = createConnection(a.socket);
          c.on('connect', () => settled++);
          c.on('error', () => (settled++, refused++));
          flood.push(c);
        }
        await waitFor(() => settled === flood.length, 30_000, 'every flood connect queued or refused');
        assert.ok(refused > 0, 'the accept queue is full');
        const b = spawnHub({ workspace: a.workspace, store: a.store, socket: a.socket });
        b.ready.catch(() => undefined); // it must never listen
        const code = await new Promise<number | null>((r) => b.proc.once('exit', r));
        assert.equal(code, 3, `the second hub refused:\n${b.output()}`);
        assert.match(b.output(), new RegExp(`pid ${a.proc.pid}\\b`), 'the refusal names hub A');
      } finally {
        for (const c of flood) c.destroy();
        process.kill(a.proc.pid!, 'SIGCONT');
      }
      const beforeResume = acked.length;
      await waitFor(() => acked.length >= beforeResume + 8, 30_000, 'the senders acknowledged again once A runs');
      sending = false;
      await Promise.all(loops);
      assert.ok(acked.length > 20, `senders were busy (${acked.length} acknowledged)`);
      const seen: string[] = [];
      for (let after = 0; ;) {
        const page = await bob.ok('inbox', { limit: 200, after_seq: after });
        seen.push(...page.messages.map(plainBody));
        if (page.next_after_seq === undefined) break;
        after = page.next_after_seq;
      }
      const lost = acked.filter((b) => !seen.includes(b));
      assert.deepEqual(lost, [], `${lost.length} of ${acked.length} acknowledged sends lost`);
      assert.equal(seen.length, new Set(seen).size, '0 duplicated');
      for (const s of [...senders, bob]) await s.close();
      await a.stop();
    },
  );
});

// Side doors to another identity (#42), over the real hub and real bridges: a hello line that
// offers no proof of its process, written by hand from inside another agent, may not act for an
// identity whose process the hub proved; a role named by the agent itself opens nothing addressed
// to that role before the claim, through any reader (get_message, inbox, search_history, the CLI's
// search and export --as).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectAgent, plainBody, type Agent } from '../helpers/agent';
import { waitFor, waitUntil } from '../helpers/wait';
import { DIST, NODE, startHub, type HubProcess } from '../helpers/hubProcess';
import { rawAgent, type RawAgent } from '../helpers/rawAgent';
import { powers } from '../../extension/shared/platform/powers';

/** Whether the hub proves a bridge's process (Linux; the no-Linux-powers lane turns it off). */
const proves = powers.procfs;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(NODE, [join(DIST, 'cli.js'), ...args], (e, stdout, stderr) =>
      resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A tool call over a hand-written connection, its result. */
async function tool(raw: RawAgent, id: number, name: string, args: object = {}) {
  raw.request(id, 'tools/call', { name, arguments: args });
  return (await raw.response(id)).result as { isError?: boolean; content: { text: string }[]; structuredContent: any };
}

describe('side doors to another identity (#42)', () => {
  let hub: HubProcess;
  let alice: Agent;
  before(async () => {
    hub = await startHub();
    alice = await connectAgent({ socket: hub.socket, name: 'alice', ownAgentProcess: true });
  });
  after(async () => {
    await alice?.close();
    await hub?.stop();
  });

  it("a hello without proof, beside carol's proven session, reads and answers nothing of carol's", async () => {
    const carol = await connectAgent({ socket: hub.socket, name: 'carol', ownAgentProcess: true });
    const id = (await alice.ok('send_handoff', { to: 'carol', body: 'the deploy key is in vault/prod' })).message_id;
    // One hello line as carol, written by hand: no `proves`.
    const forged = await rawAgent(hub.socket, { identity: 'carol' });
    try {
      await forged.initialize();
      const inbox = await tool(forged, 1, 'inbox');
      const done = await tool(forged, 2, 'report_result', { message_id: id, outcome: 'done', summary: 'forged' });
      if (!proves) {
        // No /proc: nobody is proven, so the stated session is served (its surfacings marked stated).
        assert.notEqual(inbox.isError, true, JSON.stringify(inbox));
        return;
      }
      for (const [name, r] of [
        ['inbox', inbox],
        ['report_result', done],
      ] as const) {
        assert.equal(r.isError, true, `${name} answered: ${JSON.stringify(r.structuredContent)}`);
        assert.match(
          r.content[0].text,
          /did not prove which process it is, and carol is live in a session whose process the hub proved.*Nothing was recorded/,
        );
        assert.doesNotMatch(JSON.stringify(r), /vault\/prod/, `${name} showed carol's mail`);
      }
      const d = (await alice.ok('get_receipts', { message_id: id })).deliveries[0];
      assert.deepEqual(d.receipts, [], 'nothing recorded as carol');
      // carol's own session still answers for her.
      await carol.ok('report_result', { message_id: id, outcome: 'done', summary: 'carol did it' });
      const mine = (await alice.ok('get_receipts', { message_id: id })).deliveries[0].receipts;
      assert.deepEqual(
        mine.map((r: { by: string; summary: string }) => [r.by, plainBody({ body: r.summary })]),
        [['carol', 'carol did it']],
      );
    } finally {
      forged.close();
      await carol.close();
    }
  });

  it('a stated session that came first is closed when a proven session of its identity attaches, and refused after', async () => {
    const early = await rawAgent(hub.socket, { identity: 'dora' });
    await early.initialize();
    const before = await tool(early, 1, 'whoami');
    assert.notEqual(before.isError, true, 'nobody proven holds dora: a stated session is served');
    let closed = false;
    early.socket.once('close', () => (closed = true));
    const dora = await connectAgent({ socket: hub.socket, name: 'dora', ownAgentProcess: true });
    try {
      if (!proves) return;
      await waitFor(() => closed, 10_000, 'the stated session closed by the hub');
      const again = await rawAgent(hub.socket, { identity: 'dora' });
      try {
        await again.initialize();
        const r = await tool(again, 1, 'inbox');
        assert.equal(r.isError, true, JSON.stringify(r));
        assert.match(r.content[0].text, /did not prove which process it is, and dora is live/);
      } finally {
        again.close();
      }
      assert.equal((await dora.ok('whoami')).live_sessions_of_identity, 1, "only dora's proven session is live");
    } finally {
      early.close();
      await dora.close();
    }
  });

  it('a role claimed after a handoff to it opens none of it: get_message, inbox, search_history, the CLI search and export --as', async () => {
    const bob = await connectAgent({ socket: hub.socket, name: 'bob', roles: ['security'] });
    const old = (await alice.ok('send_handoff', { to: 'role:security', body: 'the staging db password is hunter2' }))
      .message_id;
    await bob.ok('ack', { message_id: old });
    await bob.ok('report_result', { message_id: old, outcome: 'done', summary: 'rotated' });
    // eve names herself a holder of the role, after.
    const eve = await connectAgent({ socket: hub.socket, name: 'eve', roles: ['security'] });
    try {
      const fresh = (await alice.ok('send_handoff', { to: 'role:security', body: 'a new password question' }))
        .message_id;
      await waitUntil(async () => (await eve.ok('inbox', {})).messages.length === 1, 5000, 'the new one reaches eve');
      const search = await eve.ok('search_history', { text: 'password' });
      assert.deepEqual(
        search.hits.map((h: { message_id: string }) => h.message_id),
        [fresh],
        'search_history: only what was addressed to eve',
      );
      assert.match(
        JSON.stringify((await eve.call('get_message', { message_id: old })).content),
        /not_addressed_to_you/,
      );
      assert.doesNotMatch(JSON.stringify(await eve.ok('inbox', {})), /hunter2/);
      const searched = await cli(['search', '--hub', hub.socket, '--as', 'eve', 'password']);
      assert.equal(searched.code, 0, searched.stderr);
      assert.doesNotMatch(searched.stdout, /hunter2/, 'handoff search --as eve');
      const exported = await cli(['export', '--hub', hub.socket, '--since', '1d', '--open', '--as', 'eve']);
      assert.equal(exported.code, 0, exported.stderr);
      assert.doesNotMatch(exported.stdout, /hunter2/, 'handoff export --as eve');
      assert.match(exported.stdout, /a new password question/, 'export --as eve has what was addressed to her');
      // bob, who held the role when it was sent, still reads it.
      assert.match(JSON.stringify(await bob.ok('search_history', { text: 'hunter2' })), new RegExp(old));
    } finally {
      await eve.close();
      await bob.close();
    }
  });
});

// A flood to one agent (#44.3): 10 000 handoffs wait for bob, who was away. What his next turn
// receives — the pushes replayed when his bridge attaches, the footer on a tool result, the hook's
// context, an inbox page — is bounded in bytes, oldest first, with a count of the rest and how to
// page; paging the inbox reaches all 10 000 exactly once, so nothing was dropped from the store.
// The oldest fifty carry the largest bodies (60 KB), so a bound by count would not hold in bytes.
// Real hub, real bridge, the SDK's client, the real hook program.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { runHook } from '../helpers/hook';
import { startHub, type HubProcess } from '../helpers/hubProcess';
import { rawAgent, type RawAgent } from '../helpers/rawAgent';
import { sendMany } from '../helpers/sendMany';
import { waitFor } from '../helpers/wait';
import { FOOTER_BYTES, HOOK_BYTES, INBOX_PAGE_BYTES, REPLAY_BYTES } from '../../extension/hub/deliver/budgets';

const BIG = 50;
const N = 10_000;
const bytes = (s: string) => Buffer.byteLength(s);

describe('a flood to one agent', () => {
  let hub: HubProcess;
  let alice: RawAgent;
  let bob: Agent;
  let ids: string[];

  before(async () => {
    hub = await startHub();
    alice = await rawAgent(hub.socket, { identity: 'alice' });
    await alice.initialize();
    await (await connectAgent({ socket: hub.socket, name: 'bob' })).close(); // known, then away
    ids = [...(await sendMany(alice, 'bob', BIG, 60_000)), ...(await sendMany(alice, 'bob', N - BIG, 1000, 64))];
    bob = await connectAgent({ socket: hub.socket, name: 'bob' });
  });
  after(async () => {
    await bob?.close();
    alice?.close();
    await hub?.stop();
  });

  it('replays on attach within a byte budget, the oldest first, and says how many more wait', async () => {
    await waitFor(
      () => bob.pushes.some((p) => p.content.includes('more unacked handoffs')),
      60_000,
      () => `the replay's notice (${bob.pushes.length} pushes)`,
    );
    const pushed = bob.pushes.filter((p) => p.meta.message_id);
    const carried = bob.pushes.reduce((n, p) => n + bytes(p.content), 0);
    console.log(`replay on attach: ${pushed.length} pushes, ${carried} bytes`);
    assert.ok(pushed.length >= 1, 'the oldest is pushed');
    assert.ok(carried <= REPLAY_BYTES, `${carried} bytes replayed, over ${REPLAY_BYTES}`);
    assert.deepEqual(
      pushed.map((p) => p.meta.message_id),
      ids.slice(0, pushed.length),
      'oldest first',
    );
    const notice = bob.pushes.find((p) => p.content.includes('more unacked handoffs'))!.content;
    assert.match(notice, new RegExp(`${N - pushed.length} more unacked handoffs`));
    assert.match(notice, /after_seq/, 'says how to page');
  });

  it("keeps the footer within its budget, with the count and the oldest's id", async () => {
    const r = await bob.call('whoami');
    const footer = r.structuredContent.unacked_footer as string;
    console.log(`footer: ${bytes(footer)} bytes`);
    assert.ok(bytes(footer) <= FOOTER_BYTES, footer);
    assert.match(footer, new RegExp(`unacked handoffs: ${N} \\(${ids[0]}`));
  });

  it("keeps the hook's context within its budget, the oldest unseen first, with the count of the rest", async () => {
    const r = await runHook(
      ['claude', 'UserPromptSubmit', '--name', 'bob'],
      { session_id: 'flood', hook_event_name: 'UserPromptSubmit', cwd: hub.workspace },
      { HANDOFF_HUB: hub.socket },
    );
    const context = r.json?.hookSpecificOutput?.additionalContext as string;
    assert.ok(context, `the hook printed context: ${r.stdout.slice(0, 300)} ${r.stderr.slice(-300)}`);
    console.log(`hook context: ${bytes(r.stdout)} bytes`);
    assert.ok(bytes(r.stdout) <= HOOK_BYTES, `${bytes(r.stdout)} bytes printed, over ${HOOK_BYTES}`);
    const shown = [...context.matchAll(/^Handoff (\S+) from alice/gm)].map((m) => m[1]);
    assert.ok(shown.length >= 1, 'the oldest is shown');
    assert.deepEqual(shown, ids.slice(0, shown.length), 'oldest first');
    assert.match(context, new RegExp(`${N - shown.length} more unseen handoffs wait`));
    assert.match(context, /after_seq/, 'says how to page');
  });

  it('pages the inbox within a byte budget through all 10 000 exactly once', async () => {
    const seen = new Map<string, number>();
    let pages = 0;
    let largest = 0;
    for (let after: number | undefined = 0; after !== undefined; pages++) {
      const r = await bob.call('inbox', { limit: 200, after_seq: after });
      assert.ok(!r.isError, JSON.stringify(r.content).slice(0, 300));
      const size = bytes(JSON.stringify(r));
      largest = Math.max(largest, size);
      assert.ok(size <= INBOX_PAGE_BYTES, `page ${pages}: ${size} bytes, over ${INBOX_PAGE_BYTES}`);
      const messages = r.structuredContent.messages as { message_id: string }[];
      assert.ok(messages.length > 0, `page ${pages} is empty`);
      for (const m of messages) seen.set(m.message_id, (seen.get(m.message_id) ?? 0) + 1);
      after = r.structuredContent.next_after_seq;
    }
    console.log(`inbox: ${pages} pages, the largest ${largest} bytes`);
    assert.equal(ids.filter((id) => !seen.has(id)).length, 0, 'lost');
    assert.equal([...seen.values()].filter((k) => k > 1).length, 0, 'duplicated');
    assert.equal(seen.size, N);
  });
});

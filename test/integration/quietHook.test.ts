// A tool-call hook with nothing waiting exits on the hub's quiet mark without asking it
// (shared/quiet.ts), and never misses a handoff for it: the real hook program, a real hub process.
// The mark goes in the commit that gives the identity a handoff, before the send is acknowledged;
// a mark left by a hub killed with -9 names a process that is gone and is not trusted.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { runHook } from '../helpers/hook';
import { startHub, tempDir, type HubProcess } from '../helpers/hubProcess';
import { quietMarkPath } from '../../extension/shared/quiet';

describe('quiet marks: a tool-call hook with nothing waiting does not ask the hub', () => {
  let hub: HubProcess;
  let alice: Agent;
  let bob: Agent;
  const trace = join(tempDir('quiet-trace'), 'hooks.ndjson');
  const outcomes = () =>
    readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { outcome: string; ids?: string[] });
  const toolCall = () =>
    runHook(
      ['claude', 'PostToolUse', '--name', 'bob'],
      { session_id: 'Q1', hook_event_name: 'PostToolUse', cwd: hub.workspace },
      { HANDOFF_HUB: hub.socket, HANDOFF_HOOK_TRACE: trace },
    );
  const context = (r: { json?: any }) => r.json?.hookSpecificOutput?.additionalContext as string | undefined;

  before(async () => {
    hub = await startHub();
    alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    bob = await connectAgent({ socket: hub.socket, name: 'bob' });
  });
  after(async () => {
    await alice?.close();
    await bob?.close();
    await hub?.stop();
  });

  it('asks once, then exits on the mark; a handoff unmarks bob before its send is acknowledged and surfaces at the next tool call', async () => {
    const mark = quietMarkPath(hub.socket, 'bob');
    assert.equal(existsSync(mark), false, 'no mark before a hook of bob was answered');
    await toolCall();
    assert.equal(readFileSync(mark, 'utf8'), String(hub.proc.pid), "the hub's pid in the mark");
    for (let i = 0; i < 3; i++) await toolCall();
    assert.deepEqual(
      outcomes().map((o) => o.outcome),
      ['answered', 'quiet', 'quiet', 'quiet'],
    );

    const sent = await alice.ok('send_handoff', { to: 'bob', body: 'check the flaky test' });
    assert.equal(existsSync(mark), false, 'gone by the time the send is acknowledged');
    const next = await toolCall();
    assert.ok(context(next)?.includes(sent.message_id), 'the next tool call surfaces it');
    await toolCall();
    assert.equal(outcomes().at(-1)!.outcome, 'answered', 'still waiting for its ACK: the hook asks');

    await bob.ok('ack', { message_id: sent.message_id });
    assert.ok(existsSync(mark), 'ACKed: nothing waits, marked again in the same commit');
    await toolCall();
    assert.equal(outcomes().at(-1)!.outcome, 'quiet');
  });

  it("a hub killed with -9 leaves its marks; a hook does not trust them and asks (no hub), then the new hub's", async () => {
    const mark = quietMarkPath(hub.socket, 'bob');
    assert.ok(existsSync(mark));
    await hub.kill9();
    assert.ok(existsSync(mark), 'kill -9 leaves the mark behind');
    await toolCall();
    assert.equal(outcomes().at(-1)!.outcome, 'no hub', 'a dead pid: asked, and nobody answered');
    hub = await hub.restart();
    assert.equal(existsSync(mark), false, 'the new hub cleared the old marks');
    const sent = await alice.ok('send_handoff', { to: 'bob', body: 'after the crash' });
    const next = await toolCall();
    assert.ok(context(next)?.includes(sent.message_id));
  });
});

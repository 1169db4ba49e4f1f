// G8 for an idle agent: an interactive Claude Code session (under tmux), set up only by `handoff
// connect claude`, sits at its prompt; a handoff arrives; the idle waiter (asyncRewake) wakes the
// session, its model sees the handoff and ACKs it — within 10 s of the send.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { agentHome, cliInstalled } from '../helpers/cli/agents';
import { handoffConnect } from '../helpers/cli/connect';
import { startScriptedModel, type ScriptedModel } from '../helpers/cli/scriptedModel';
import { startInteractive, tmuxAvailable, type TmuxSession } from '../helpers/cli/tmux';
import { startHub, type HubProcess } from '../helpers/hubProcess';
import { skipOrFail, whyMissing } from '../helpers/skip.mjs';
import { waitUntil } from '../helpers/wait';

describe('attention in claude: an idle interactive session', () => {
  let hub: HubProcess | undefined;
  let alice: Agent | undefined;
  let model: ScriptedModel | undefined;
  let tmux: TmuxSession | undefined;
  after(async () => {
    tmux?.kill();
    await model?.close();
    await alice?.close();
    await hub?.stop();
  });

  it('is woken by a handoff within 10 s and ACKs it', { timeout: 180_000 }, async (t) => {
    if (!cliInstalled('claude')) return skipOrFail(t, 'claude CLI (npm install)');
    if (!tmuxAvailable()) return skipOrFail(t, whyMissing('setup-agents', 'tmux'));
    hub = await startHub({ socket: null });
    alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    const needle = `wake-${Date.now().toString(36)}`;
    let id: string | undefined;
    let acked = false;
    model = await startScriptedModel(({ request }) => {
      if (id && !acked && request.text.includes(needle)) {
        acked = true;
        return { tool: 'ack', args: { message_id: id } };
      }
      return { text: acked ? 'ACKed the handoff.' : 'Ready.' };
    });
    const home = agentHome('claude', model.url);
    handoffConnect('claude', hub.workspace, home.env, 'bob');
    tmux = startInteractive(home, hub.workspace);
    // Idle: bob's session is on the bus (its bridge connected) and no turn is running.
    await waitUntil(
      async () => (await alice!.ok('list_peers')).peers.some((p: any) => p.identity === 'bob' && p.live_sessions > 0),
      60_000,
      () => `bob's session on the bus; the screen:\n${tmux!.screen()}`,
      100,
    );
    // The SessionStart waiter is armed once the hub holds it, which shows nowhere outside the hub
    // (a send shows it, but that is the test): this leaves it time to ask.
    await new Promise((r) => setTimeout(r, 1500)); // sleep: no event tells the hub holds the waiter
    const sentAt = Date.now();
    const sent = await alice.ok('send_handoff', { to: 'bob', body: `Please look at ${needle} when you can` });
    id = sent.message_id;
    assert.equal(sent.recipients[0].seen_when, 'now', 'the sender is told the idle session is woken now');
    await waitUntil(
      async () => (await alice!.ok('get_receipts', { message_id: id })).deliveries[0].state === 'acked',
      10_000,
      () => `the ACK; the screen:\n${tmux!.screen()}`,
      100,
    );
    const wokeIn = Date.now() - sentAt;
    const bob = (await alice.ok('get_receipts', { message_id: id })).deliveries[0];
    assert.equal(bob.surfaced[0].via, 'claude idle wake');
    assert.equal(model.surfacings(needle), 1);
    console.log(`# claude idle: woken and ACKed ${wokeIn} ms after the send`);
  });
});

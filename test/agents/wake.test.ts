// G8 for an idle session of each CLI, set up only by `handoff connect`, in tmux, started and never
// prompted. Claude Code is woken by its own idle waiter (asyncRewake). Codex and Gemini have no wake
// of their own: a handoff arrives; the hub
// types one wake line into its pane, the CLI starts a turn, its prompt hook surfaces the handoff,
// and the model ACKs it — with nobody typing. The wake and the surfacing are recorded apart.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { agentHome, cliInstalled } from '../helpers/cli/agents';
import { handoffConnect, hookTraces } from '../helpers/cli/connect';
import { startScriptedModel, type ScriptedModel } from '../helpers/cli/scriptedModel';
import { startInteractive, tmuxAvailable, type TmuxSession } from '../helpers/cli/tmux';
import { startHub, tempDir, type HubProcess } from '../helpers/hubProcess';
import { skipOrFail, whyMissing } from '../helpers/skip.mjs';
import { waitUntil } from '../helpers/wait';

for (const cli of ['claude', 'codex', 'gemini'] as const) {
  describe(`attention in ${cli}: an idle session in tmux`, () => {
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

    const how = cli === 'claude' ? 'by its idle waiter' : 'by one line typed into its pane';
    it(`is woken ${how}, sees the handoff and ACKs it`, { timeout: 180_000 }, async (t) => {
      if (!cliInstalled(cli)) return skipOrFail(t, `${cli} CLI (npm install)`);
      if (!tmuxAvailable()) return skipOrFail(t, whyMissing('setup-agents', 'tmux'));
      hub = await startHub({ socket: null });
      alice = await connectAgent({ socket: hub.socket, name: 'alice', ownAgentProcess: true });
      const needle = `wake-${cli}-${Date.now().toString(36)}`;
      let id: string | undefined;
      let acked = false;
      model = await startScriptedModel(({ request }) => {
        if (id && !acked && request.text.includes(needle)) {
          acked = true;
          return { tool: 'ack', args: { message_id: id } };
        }
        return { text: acked ? 'ACKed the handoff.' : 'Ready.' };
      });
      const trace = join(tempDir('hook-trace'), 'trace.jsonl');
      const traces = () => hookTraces(trace);
      const home = agentHome(cli, model.url, { env: { HANDOFF_HOOK_TRACE: trace } });
      handoffConnect(cli, hub.workspace, home.env, 'bob');
      tmux = startInteractive(home, hub.workspace);
      const seen = (what: string) => () => `${what}; the screen:\n${tmux!.screen()}`;
      // Nobody types: Codex has run no hook yet (it runs them with its first turn), its bridge says
      // which pane it is in; Gemini's SessionStart hook runs at start-up.
      await waitUntil(
        async () => (await alice!.ok('list_peers')).peers.some((p: any) => p.identity === 'bob' && p.live_sessions > 0),
        60_000,
        seen('bob on the bus'),
      );
      if (cli === 'gemini')
        await waitUntil(() => traces().some((x) => x.event === 'SessionStart'), 60_000, seen('gemini idle'));
      // Claude's SessionStart waiter is armed once the hub holds it, which shows nowhere outside the
      // hub (a send shows it, but that is the test): this leaves it time to ask.
      if (cli === 'claude') await new Promise((r) => setTimeout(r, 1500)); // sleep: no event tells the hub holds the waiter
      const requestsBefore = model.requests.length;
      const sentAt = Date.now();
      const sent = await alice.ok('send_handoff', { to: 'bob', body: `Please look at ${needle} when you can` });
      id = sent.message_id;
      assert.equal(sent.recipients[0].seen_when, 'now', 'the sender is told the idle session is woken now');
      const receipts = async () => (await alice!.ok('get_receipts', { message_id: id })).deliveries[0];
      await waitUntil(async () => (await receipts()).state === 'acked', 60_000, seen('the ACK'));
      const seenAt = model.requests[model.firstRequestWith(needle)].at;
      const bob = await receipts();
      // Claude's waiter may run before its MCP session is live: its surfacing is then recorded again,
      // flagged replayed, for that session once its hooks are matched to it (Attention.join).
      assert.equal(bob.surfaced.filter((x: any) => !x.replayed).length, 1, 'surfaced once, by the hook');
      assert.equal(model.surfacings(needle), 1, 'the handoff entered the context once');
      // The woken turn's first hook: Claude's waiter; Codex's first turn starts with SessionStart;
      // Gemini ran that at start-up.
      const via = { claude: 'claude idle wake', codex: 'codex SessionStart', gemini: 'gemini BeforeAgent' }[cli];
      assert.equal(bob.surfaced[0].via, via);
      if (cli === 'claude') assert.equal(bob.woken, undefined, 'nothing typed into Claude Code');
      else {
        assert.equal(bob.woken?.length, 1, 'one wake typed');
        assert.equal(bob.woken[0].how, 'tmux');
        assert.match(tmux.screen(), /New handoff from alice — check your Handoff inbox/);
        assert.ok(
          model.requests.slice(requestsBefore).some((r) => r.text.includes('New handoff from alice')),
          'the woken turn started from the typed line',
        );
      }
      assert.deepEqual(model.errors, []);
      console.log(
        `# ${cli} idle in tmux: woken ${how}, first model request with the handoff ${seenAt - sentAt} ms after the send`,
      );
    });
  });
}

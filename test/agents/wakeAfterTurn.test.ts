// The wake a user meets most (#45): a Codex or Gemini TUI in tmux ran a turn of its own ("Say
// hello, then wait for my next task."), its reply is on the screen, nothing runs and nobody types;
// a handoff arrives. The hub must tell the TUI's own redraws (Gemini repaints its footer, hints and
// MCP count by itself, later on a loaded machine) from a person's draft, and type its one line.
// HANDOFF_WAKE_RUNS=N repeats the wake N times per CLI (the acceptance measure: 10 of 10 loaded).
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

const RUNS = Math.max(1, Number(process.env.HANDOFF_WAKE_RUNS) || 1);

for (const cli of ['codex', 'gemini'] as const) {
  describe(`attention in ${cli}: idle after a turn of its own, in tmux`, () => {
    const stops: (() => unknown)[] = [];
    after(async () => {
      for (const s of stops.reverse()) await s();
    });

    it(`is woken by one typed line, ${RUNS} of ${RUNS} times`, { timeout: 120_000 * RUNS }, async (t) => {
      if (!cliInstalled(cli)) return skipOrFail(t, `${cli} CLI (npm install)`);
      if (!tmuxAvailable()) return skipOrFail(t, whyMissing('setup-agents', 'tmux'));
      const runs: { wokenMs?: number; acked: boolean; surfacings: number }[] = [];
      for (let run = 0; run < RUNS; run++) {
        const hub: HubProcess = await startHub({ socket: null });
        stops.push(() => hub.stop());
        const alice: Agent = await connectAgent({ socket: hub.socket, name: 'alice', ownAgentProcess: true });
        stops.push(() => alice.close());
        const needle = `idle-${cli}-${run}-${Date.now().toString(36)}`;
        let id: string | undefined;
        let asked = false;
        const model: ScriptedModel = await startScriptedModel(({ request }) => {
          if (id && !asked && request.text.includes(needle)) {
            asked = true;
            return { tool: 'ack', args: { message_id: id } };
          }
          if (asked) return { text: 'ACKed the handoff.' };
          return { text: 'Hello! I will wait for your next task.' };
        });
        stops.push(() => model.close());
        const trace = join(tempDir('hook-trace'), 'trace.jsonl');
        const ends = () => hookTraces(trace).filter((x) => x.event === (cli === 'gemini' ? 'AfterAgent' : 'Stop'));
        const home = agentHome(cli, model.url, { env: { HANDOFF_HOOK_TRACE: trace } });
        handoffConnect(cli, hub.workspace, home.env, 'bob');
        const tmux: TmuxSession = startInteractive(home, hub.workspace);
        stops.push(() => tmux.kill());
        const seen = (what: string) => () => `${what}; the screen:\n${tmux.screen()}\nthe hub:\n${hub.log()}`;
        await waitUntil(
          async () =>
            (await alice.ok('list_peers')).peers.some((p: any) => p.identity === 'bob' && p.live_sessions > 0),
          60_000,
          seen('bob on the bus'),
        );
        await tmux.waitForScreen(cli === 'gemini' ? /Type your message/ : /›/, 60_000);
        // Typed, then Enter until its turn starts: on a loaded machine an Enter that follows the text
        // too closely is read as part of a paste and left in the prompt.
        const starts = () =>
          hookTraces(trace).filter((x) => x.event === (cli === 'gemini' ? 'BeforeAgent' : 'UserPromptSubmit'));
        tmux.type('Say hello, then wait for my next task.');
        await tmux.waitForScreen(/Say hello, then wait/, 30_000);
        await waitUntil(
          () => starts().length > 0 || void tmux.keys('Enter'),
          60_000,
          seen('the first turn started'),
          3000,
        );
        await waitUntil(() => ends().length > 0, 60_000, seen('the first turn ended'));
        await tmux.waitForScreen(/I will wait for your next task/, 30_000);
        // The case: the reply on screen and nothing running for a while, nobody typing.
        await new Promise((r) => setTimeout(r, 4000)); // sleep: the idle spell a person leaves is time, not an event
        const sentAt = Date.now();
        const sent = await alice.ok('send_handoff', { to: 'bob', body: `Please look at ${needle} when you can` });
        id = sent.message_id;
        assert.equal(sent.recipients[0].seen_when, 'now');
        const receipts = async () => (await alice.ok('get_receipts', { message_id: id })).deliveries[0];
        // Woken: the wake typed and recorded, and the turn it started reached the model.
        const wokeAt = await waitUntil(
          async () =>
            (await receipts()).woken?.length === 1 &&
            model.requests.find((r) => r.at >= sentAt && r.text.includes('New handoff from alice'))?.at,
          15_000,
          seen(`the wake (run ${run + 1})`),
        ).catch(() => undefined);
        const acked = await waitUntil(async () => (await receipts()).state === 'acked', 60_000).catch(() => false);
        runs.push({ wokenMs: wokeAt && wokeAt - sentAt, acked, surfacings: model.surfacings(needle) });
        assert.deepEqual(model.errors, []);
        for (const s of stops.splice(0).reverse()) await s();
      }
      const woken = runs.filter((r) => r.wokenMs !== undefined);
      console.log(
        `# ${cli} idle after a turn, in tmux: woken ${woken.length} of ${RUNS} within 15 s (the woken turn's first request ${woken.map((r) => r.wokenMs).join(', ')} ms after the send); ACKed ${runs.filter((r) => r.acked).length} of ${RUNS}`,
      );
      assert.equal(woken.length, RUNS, 'woken every time');
      assert.ok(
        runs.every((r) => r.acked),
        `ACKed every time: ${JSON.stringify(runs)}`,
      );
      assert.ok(
        runs.every((r) => r.surfacings === 1),
        'the handoff entered the context once each time',
      );
    });
  });
}

// G8 with the real agent CLIs from npm (Claude Code, Codex, Gemini CLI), each set up only by
// `handoff connect <cli>` and driven by a scripted model on 127.0.0.1: a handoff sent while the
// agent is busy with shell steps reaches its model's context by the next model request — without
// a Handoff tool call — exactly once; the model ACKs; the sender sees `surfaced` and the ACK.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { agentHome, cliInstalled, commandRunning, runAgent, type Cli } from '../helpers/cli/agents';
import { startScriptedModel, type Script } from '../helpers/cli/scriptedModel';
import { handoffConnect } from '../helpers/cli/connect';
import { startHub, type HubProcess } from '../helpers/hubProcess';
import { skipOrFail } from '../helpers/skip.mjs';
import { waitUntil } from '../helpers/wait';

const CLIS: Cli[] = ['claude', 'codex', 'gemini'];
const STEPS = 6;

for (const cli of CLIS) {
  describe(`attention in ${cli}: a busy session`, () => {
    let hub: HubProcess | undefined;
    let alice: Agent | undefined;
    after(async () => {
      await alice?.close();
      await hub?.stop();
    });

    it(
      'gets a handoff sent during tool call 1 by the next model request, ACKs it, and the sender sees surfaced and the ACK',
      { timeout: 240_000 },
      async (t) => {
        if (!cliInstalled(cli)) return skipOrFail(t, `${cli} CLI (npm install)`);
        hub = await startHub({ socket: null }); // the socket derived from the folder, as agents find it
        alice = await connectAgent({ socket: hub.socket, name: 'alice', ownAgentProcess: true });
        let sent: { message_id: string } | undefined;
        let sending: Promise<void> | undefined;
        let acked = false;
        // A word only the handoff's body carries: counting it counts the handoff entering the context.
        const needle = `rerun-${cli}-${Date.now().toString(36)}`;
        const script: Script = ({ step, request }) => {
          if (step === 0) {
            // Sent while tool call 1 runs: it sleeps long enough for the send to land first.
            const call1 = 'sleep 2; echo step 1';
            sending = waitUntil(() => commandRunning(call1), 60_000, 'tool call 1 running', 20).then(async () => {
              sent = await alice!.ok('send_handoff', {
                to: 'bob',
                body: `Please ${needle} the integration suite and report`,
              });
            });
            sending.catch(() => undefined); // failed, it fails the test at `await sending`, not the process now
            return { shell: call1 };
          }
          if (sent && !acked && request.text.includes(needle)) {
            acked = true;
            return { tool: 'ack', args: { message_id: sent.message_id } };
          }
          if (step < STEPS + 1) return { shell: `echo step ${step + 1}` };
          return { text: 'All steps done.' };
        };
        const model = await startScriptedModel(script, { maxRequests: 30 });
        try {
          const home = agentHome(cli, model.url);
          const wrote = handoffConnect(cli, hub.workspace, home.env, 'bob');
          assert.match(wrote, /hook/i, `connect says what it wrote: ${wrote}`);
          const run = await runAgent(home, hub.workspace, 'Run the six build steps, one shell command each.', {
            timeoutMs: 180_000,
          });
          await sending;
          assert.ok(sent, 'the handoff was sent during tool call 1');
          assert.equal(run.timedOut, false, `${cli} finished: ${run.stderr.slice(-2000)}`);
          assert.deepEqual(model.errors, []);
          const id = sent.message_id;
          // Request 0 asked for call 1; request 1 carries call 1's result: the handoff must be there.
          const first = model.firstRequestWith(needle);
          assert.equal(
            first,
            1,
            `the handoff entered the context in request ${first} (of ${model.requests.length}); tools called before: ${model.requests
              .slice(0, first)
              .map((r) => (r.move && 'name' in r.move ? r.move.name : 'text'))
              .join(', ')}`,
          );
          assert.equal(model.surfacings(needle), 1, 'it entered the context once');
          const receipts = await alice.ok('get_receipts', { message_id: id });
          const bob = receipts.deliveries[0];
          assert.equal(bob.state, 'acked', `${cli}'s model ACKed it: ${JSON.stringify(bob)}`);
          assert.equal(
            bob.surfaced.filter((s: any) => s.path === 'hook').length,
            1,
            `surfaced once by a hook: ${JSON.stringify(bob.surfaced)}`,
          );
          assert.match(bob.surfaced[0].via, new RegExp(`^${cli} `));
          const ack = bob.receipts.find((r: any) => r.kind === 'ack');
          assert.ok(ack.session && ack.at, 'the ACK names its session and time');
          assert.equal(
            bob.surfaced[0].session,
            ack.session,
            "surfaced in the same session that ACKed: the hook was matched to the agent's MCP session",
          );
          console.log(
            `# ${cli}: surfaced in request ${first} via ${bob.surfaced[0].via}; ${model.requests.length} model requests; run ${run.durationMs} ms`,
          );
        } finally {
          await model.close();
        }
      },
    );
  });
}

// G8 over whole turns of the real CLIs (set up only by `handoff connect`, scripted model on
// 127.0.0.1): five handoffs over eight tool calls each surface exactly once; a handoff that lands
// after the last tool call keeps the turn going once, then it ends; with the hub killed mid-turn
// every hook returns within 200 ms and every tool call completes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { agentHome, cliInstalled, commandRunning, runAgent, type Cli } from '../helpers/cli/agents';
import { handoffConnect, hookTraces } from '../helpers/cli/connect';
import { startScriptedModel, type Script } from '../helpers/cli/scriptedModel';
import { startHub, tempDir, type HubProcess } from '../helpers/hubProcess';
import { skipOrFail } from '../helpers/skip.mjs';
import { waitUntil } from '../helpers/wait';
import { powers } from '../../extension/shared/platform/powers';

const CLIS: Cli[] = ['claude', 'codex', 'gemini'];

for (const cli of CLIS) {
  describe(`attention in ${cli}: whole turns`, () => {
    let hub: HubProcess | undefined;
    let alice: Agent | undefined;
    after(async () => {
      await alice?.close();
      await hub?.stop().catch(() => undefined);
    });

    /** A hub, a sender, a connected CLI and a trace file; the script is the test's. */
    async function setUp(t: { skip(m?: string): unknown }) {
      if (!cliInstalled(cli)) {
        skipOrFail(t, `${cli} CLI (npm install)`);
        return undefined;
      }
      hub ??= await startHub({ socket: null });
      alice ??= await connectAgent({ socket: hub.socket, name: 'alice', ownAgentProcess: true });
      const trace = join(tempDir('hook-trace'), 'trace.jsonl');
      return {
        trace,
        send: (body: string) => alice!.ok('send_handoff', { to: 'bob', body }) as Promise<{ message_id: string }>,
      };
    }

    async function run(script: Script, trace: string) {
      const model = await startScriptedModel(script, { maxRequests: 30 });
      const home = agentHome(cli, model.url, { env: { HANDOFF_HOOK_TRACE: trace } });
      handoffConnect(cli, hub!.workspace, home.env, 'bob');
      const result = await runAgent(home, hub!.workspace, 'Work through the steps, one shell command each.', {
        timeoutMs: 180_000,
      });
      await model.close();
      assert.equal(result.timedOut, false, `${cli} finished: ${result.stderr.slice(-1500)}`);
      assert.deepEqual(model.errors, []);
      return { model, result };
    }

    it(
      'five handoffs over eight tool calls: each surfaces exactly once per session, none missed',
      { timeout: 240_000 },
      async (t) => {
        const env = await setUp(t);
        if (!env) return;
        const tag = `${cli}-${Date.now().toString(36)}`;
        const needles = [1, 2, 3, 4, 5].map((k) => `plan-${tag}-item-${k}`);
        const sends: Promise<unknown>[] = [];
        const script: Script = ({ step }) => {
          // Handoff k lands while tool call k runs (calls 1, 2, 4, 6, 8 — spread, not one per call).
          const k = [1, 2, 4, 6, 8].indexOf(step + 1);
          const call = `sleep 0.6; echo call ${step + 1}`;
          if (k >= 0) {
            const sending = waitUntil(() => commandRunning(call), 60_000, `tool call ${step + 1} running`, 20).then(
              () => env.send(`Please handle ${needles[k]}`),
            );
            sending.catch(() => undefined); // failed, it fails the test at Promise.all below, not the process now
            sends.push(sending);
          }
          if (step < 8) return { shell: call };
          return { text: 'Done with the steps.' };
        };
        const { model } = await run(script, env.trace);
        const sent = (await Promise.all(sends)) as { message_id: string }[];
        // A hook's surfacing is proven from /proc on Linux; in the no-Linux-powers lane it is stated, and says so.
        const byHook = (
          await Promise.all(
            sent.map(
              async ({ message_id }) => (await alice!.ok('get_receipts', { message_id })).deliveries[0].surfaced,
            ),
          )
        )
          .flat()
          .filter((x: { path: string }) => x.path === 'hook');
        assert.ok(byHook.length > 0, 'surfaced by hooks');
        assert.deepEqual(
          [...new Set(byHook.map((x: { stated?: true }) => x.stated))],
          [powers.procfs ? undefined : true],
        );
        const counts = needles.map((n) => model.surfacings(n));
        assert.deepEqual(
          counts,
          [1, 1, 1, 1, 1],
          `each handoff entered the context once (requests: ${model.requests.length})`,
        );
        const firsts = needles.map((n) => model.firstRequestWith(n));
        assert.ok(
          firsts.every((i, k) => i > 0 && (k === 0 || i >= firsts[k - 1])),
          `in send order: ${firsts.join(', ')}`,
        );
        console.log(
          `# ${cli}: five handoffs first seen in requests ${firsts.join(', ')}; paths ${[
            ...new Set(
              hookTraces(env.trace)
                .filter((x) => x.ids?.length)
                .map((x) => x.event),
            ),
          ].join(', ')}`,
        );
      },
    );

    it(
      'a handoff landing after the last tool call keeps the turn going once, then the turn ends',
      { timeout: 240_000 },
      async (t) => {
        const env = await setUp(t);
        if (!env) return;
        const needle = `late-${cli}-${Date.now().toString(36)}`;
        let finals = 0;
        const script: Script = async ({ step, request }) => {
          if (step < 3) return { shell: `echo call ${step + 1}` };
          finals++;
          // Arrives as the model writes its last answer: only the end-of-turn hook can show it.
          if (finals === 1) await env.send(`One more thing: ${needle}`);
          return {
            text: request.text.includes(needle) ? 'Noted the late handoff; ending the turn.' : 'All three calls done.',
          };
        };
        const { model } = await run(script, env.trace);
        // What each request after the last tool call brought, for a failure to say which request was extra.
        const tail = model.requests
          .slice(3)
          .map(
            (r) =>
              `#${r.index}: ${model
                .newItems(r.index)
                .map((x) => `${x.role}/${x.kind} ${x.text.slice(0, 160)}`)
                .join(' | ')}`,
          )
          .join('\n');
        assert.equal(model.surfacings(needle), 1, `the late handoff entered the context once:\n${tail}`);
        assert.equal(
          finals,
          2,
          `the turn went on exactly once after the block (final answers: ${finals}):\n${tail}\nhooks: ${JSON.stringify(hookTraces(env.trace))}`,
        );
        const blocks = hookTraces(env.trace).filter((x) => x.ids?.length && /Stop|AfterAgent/.test(x.event));
        assert.equal(blocks.length, 1, `one end-of-turn block: ${JSON.stringify(hookTraces(env.trace))}`);
      },
    );

    // How long a hook takes is the bench's question (test/bench/hook.bench.ts), and that it gives up
    // on a stalled hub by itself is attention.test.ts's; here: with no hub, the turn goes on.
    it('with the hub killed mid-turn, hooks run and every tool call completes', { timeout: 240_000 }, async (t) => {
      const env = await setUp(t);
      if (!env) return;
      const script: Script = async ({ step }) => {
        if (step === 2) await hub!.kill9();
        if (step < 6) return { shell: `echo survived-${step + 1}` };
        return { text: 'Finished.' };
      };
      const { model } = await run(script, env.trace);
      hub = await hub!.restart(); // for the next test and the after() hook
      for (let i = 1; i <= 6; i++)
        assert.ok(model.requests.at(-1)!.text.includes(`survived-${i}`), `tool call ${i} completed`);
      const after = hookTraces(env.trace).filter((x) => x.outcome !== 'answered');
      assert.ok(after.length >= 3, `hooks ran while the hub was gone: ${JSON.stringify(hookTraces(env.trace))}`);
    });
  });
}

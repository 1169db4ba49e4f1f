// Never cut off, with the real CLIs (Claude Code, Codex, Gemini CLI) set up only by `handoff
// connect`, in one non-interactive turn each: (a) the hub killed with -9 mid-turn and a new one
// started, (b) the CLI started before any hub and the hub a few seconds later, (c) a graceful
// restart mid-turn. After each, a handoff sent to the agent surfaces into its model's context and
// the model ACKs it through its Handoff tools — in the same CLI session, nobody restarting
// anything. Once more for Codex with the hub's XDG_RUNTIME_DIR somewhere Codex does not pass on.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { agentHome, cliInstalled, commandRunning, runAgent, type Cli } from '../helpers/cli/agents';
import { handoffConnect } from '../helpers/cli/connect';
import { startScriptedModel, type Script } from '../helpers/cli/scriptedModel';
import { spawnHub, stoppable, tempDir } from '../helpers/hubProcess';
import { skipOrFail } from '../helpers/skip.mjs';
import { waitUntil } from '../helpers/wait';

const CLIS: Cli[] = ['claude', 'codex', 'gemini'];
type Fault = 'kill -9' | 'late hub' | 'graceful restart';

interface Place {
  workspace: string;
  store: string;
  env: Record<string, string>;
}

async function startHubAt(
  p: Place,
): Promise<{ stop(): Promise<void>; kill9(): Promise<void>; listeningAt: number; log: () => string }> {
  const { proc, ready, output } = spawnHub({ workspace: p.workspace, store: p.store, socket: null, env: p.env });
  await ready;
  return { ...stoppable(proc), listeningAt: Date.now(), log: output };
}

/** Milliseconds from `since` until bob's session is live on the hub again, as alice sees it. */
async function bobLive(alice: Agent, since: number): Promise<number> {
  let peers: { identity: string; live_sessions: number }[] = [];
  return waitUntil(
    async () => {
      peers = (await alice.ok('list_peers')).peers;
      return peers.some((p) => p.identity === 'bob' && p.live_sessions > 0) && Date.now() - since;
    },
    20_000,
    () => `bob live again: ${JSON.stringify(peers)}`,
    20,
  );
}

async function scenario(cli: Cli, fault: Fault, opts: { xdg?: boolean } = {}): Promise<string> {
  const base = tempDir(`cont-${cli}`);
  const place: Place = { workspace: join(base, 'ws'), store: join(base, 'store'), env: {} };
  mkdirSync(place.workspace, { recursive: true });
  let hub: Awaited<ReturnType<typeof startHubAt>> | undefined;
  let alice: Agent | undefined;
  let livedAfterMs: number | undefined;
  let sent: { message_id: string } | undefined;
  let acked = false;
  let troubled: Promise<void> | undefined;
  const needle = `resume-${cli}-${fault.replace(/\W/g, '')}-${Date.now().toString(36)}`;
  // Long enough for the trouble and the send to land before the call ends (PostToolUse surfaces it).
  const call1 = fault === 'late hub' ? 'sleep 10; echo step 1' : 'sleep 6; echo step 1';
  const trouble = async () => {
    await waitUntil(() => commandRunning(call1), 60_000, 'tool call 1 running'); // mid-turn
    if (fault === 'kill -9') await hub!.kill9();
    if (fault === 'graceful restart') await hub!.stop();
    await alice?.close();
    if (fault === 'late hub') await new Promise((r) => setTimeout(r, 1500)); // sleep: the scenario: the hub comes late
    hub = await startHubAt(place);
    alice = await connectAgent({
      socket: '',
      name: 'alice',
      cwd: place.workspace,
      env: place.env,
      ownAgentProcess: true,
    });
    livedAfterMs = await bobLive(alice, hub.listeningAt);
    sent = await alice.ok('send_handoff', { to: 'bob', body: `Please pick up ${needle} and ACK it` });
  };
  const script: Script = ({ step, request }) => {
    if (step === 0) {
      troubled = trouble();
      troubled.catch(() => undefined); // failed, it fails the test at `await troubled`, not the process now
      return { shell: call1 };
    }
    if (sent && !acked && request.text.includes(needle)) {
      acked = true;
      return { tool: 'ack', args: { message_id: sent.message_id } };
    }
    if (step < 4) return { shell: `echo step ${step + 1}` };
    return { text: acked ? 'ACKed the handoff.' : 'Done.' };
  };
  const model = await startScriptedModel(script, { maxRequests: 30 });
  try {
    const home = agentHome(cli, model.url);
    if (opts.xdg) {
      // The hub runs with the agent's HOME (one user) and a runtime dir of its own, which the CLI's
      // environment does not name: only the pointer under HOME leads there.
      place.env = { HOME: home.home, XDG_RUNTIME_DIR: tempDir('xdg-runtime') };
      assert.equal(home.env.XDG_RUNTIME_DIR, undefined);
    }
    if (fault !== 'late hub') hub = await startHubAt(place);
    alice =
      fault === 'late hub'
        ? undefined
        : await connectAgent({
            socket: '',
            name: 'alice',
            cwd: place.workspace,
            env: place.env,
            ownAgentProcess: true,
          });
    handoffConnect(cli, place.workspace, home.env, 'bob');
    const run = await runAgent(home, place.workspace, 'Run the four steps, one shell command each.', {
      timeoutMs: 180_000,
    });
    await troubled;
    assert.equal(run.timedOut, false, `${cli} finished: ${run.stderr.slice(-2000)}`);
    assert.deepEqual(model.errors, []);
    assert.ok(sent, 'the handoff was sent after the trouble');
    assert.equal(
      model.surfacings(needle),
      1,
      `the handoff entered ${cli}'s model context once (${model.requests.length} requests)`,
    );
    const bob = (await alice!.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
    assert.equal(
      bob.state,
      'acked',
      `${cli}'s model ACKed it through its Handoff tools after "${fault}": ${JSON.stringify(bob)}\n${run.stdout.slice(-1500)}`,
    );
    assert.ok(bob.pushes.length <= 1, `pushed at most once to its one session: ${JSON.stringify(bob.pushes)}`);
    const ack = bob.receipts.find((r: { kind: string }) => r.kind === 'ack');
    if (bob.surfaced.length)
      assert.equal(bob.surfaced[0].session, ack.session, 'surfaced and ACKed in the same session');
    return `${cli}, ${fault}${opts.xdg ? ' (hub on its own XDG_RUNTIME_DIR)' : ''}: live again ${livedAfterMs} ms after the new hub listened; surfaced by ${bob.surfaced[0]?.via ?? bob.pushes[0]?.kind}; ACKed; run ${run.durationMs} ms`;
  } finally {
    await model.close();
    await alice?.close();
    await hub?.stop().catch(() => undefined);
  }
}

for (const cli of CLIS) {
  describe(`never cut off: ${cli}`, () => {
    for (const fault of ['kill -9', 'late hub', 'graceful restart'] as Fault[]) {
      it(
        `after "${fault}" mid-turn, a handoff reaches the model and it ACKs it in the same session`,
        { timeout: 240_000 },
        async (t) => {
          if (!cliInstalled(cli)) return skipOrFail(t, `${cli} CLI (npm install)`);
          console.log(`# ${await scenario(cli, fault)}`);
        },
      );
    }
    if (cli === 'codex') {
      it(
        'finds a hub on a non-standard XDG_RUNTIME_DIR, which Codex does not pass to its MCP servers',
        { timeout: 240_000 },
        async (t) => {
          if (!cliInstalled(cli)) return skipOrFail(t, `${cli} CLI (npm install)`);
          console.log(`# ${await scenario(cli, 'kill -9', { xdg: true })}`);
        },
      );
    }
  });
}

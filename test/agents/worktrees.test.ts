// G11 with the real CLIs (Claude Code, Codex, Gemini CLI; scripted model), set up only as the README
// tells a user — `handoff connect <cli> --name …` run in each agent's worktree — and one hub for
// the repository, as the editor starts it for a window on it. bob works in a worktree inside the
// repository (R/.claude/worktrees/wt-bob, as `claude --worktree` makes), alice in one outside it (a
// sibling folder, as the Codex app or Conductor make). Both are on one bus: each sees the other in
// list_peers, alice's handoff surfaces in bob's model once and he ACKs it. Then bob's worktree is
// recycled (removed; a fresh one at a new path on the same branch; nobody re-runs anything): a send
// in the gap answers queued, and bob's next session, in the new worktree, gets it once and ACKs it.
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { connectAgent } from '../helpers/agent';
import { agentHome, cliInstalled, runAgent, type AgentHome, type Cli } from '../helpers/cli/agents';
import { handoffConnect } from '../helpers/cli/connect';
import { startScriptedModel, type ScriptedModel } from '../helpers/cli/scriptedModel';
import { spawnHub, stoppable, tempDir } from '../helpers/hubProcess';
import { skipOrFail } from '../helpers/skip.mjs';
import { git } from '../helpers/git';

const CLIS: Cli[] = ['claude', 'codex', 'gemini'];

/** A repository with one commit, bob's worktree inside it and alice's beside it. */
function repository(): { root: string; bob: string; alice: string } {
  const base = realpathSync(tempDir('repo'));
  const root = join(base, 'R');
  mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'commit', '-q', '--allow-empty', '-m', 'init');
  const bob = join(root, '.claude', 'worktrees', 'wt-bob');
  const alice = join(base, 'alice-1');
  git(root, 'worktree', 'add', '-q', '-b', 'wt-bob', bob);
  git(root, 'worktree', 'add', '-q', '-b', 'alice', alice);
  return { root, bob, alice };
}

interface Turn {
  /** Main requests of this turn (the model server is the scenario's; each turn starts its log anew). */
  model: ScriptedModel;
  results: string[];
}

/** One non-interactive turn in `folder`: the script's tool calls, then text; every tool result kept. */
async function turn(
  model: ScriptedModel,
  h: AgentHome,
  folder: string,
  steps: (seen: string, results: string[]) => { tool: string; args?: Record<string, unknown> } | undefined,
  env?: Record<string, string>,
): Promise<Turn> {
  const results: string[] = [];
  model.requests.length = 0;
  model.setScript(({ request, lastToolResult }) => {
    if (lastToolResult !== undefined) results.push(lastToolResult);
    return steps(request.text, results) ?? { text: 'Done.' };
  });
  const run = await runAgent(h, folder, 'Do the Handoff steps.', { timeoutMs: 150_000, env });
  assert.equal(run.timedOut, false, `${h.cli} in ${folder} finished: ${run.stderr.slice(-2000)}`);
  assert.deepEqual(model.errors, []);
  return { model, results };
}

async function scenario(cli: Cli): Promise<string> {
  const repo = repository();
  const store = join(tempDir('repo-store'), 'store');
  const model = await startScriptedModel(() => ({ text: 'Done.' }), { maxRequests: 20 });
  // One user on one machine: both agents run under the same HOME (Codex's config is per user).
  const h = agentHome(cli, model.url);
  const hubProc = spawnHub({ workspace: repo.root, store, socket: null, env: { HOME: h.home } });
  await hubProc.ready;
  const hub = stoppable(hubProc.proc);
  try {
    // Set up as a user does: connect in each agent's own worktree, naming it.
    const said = handoffConnect(cli, repo.bob, h.env, 'bob');
    assert.match(said, new RegExp(`connected for the repository ${repo.root}`), said);
    assert.match(said, /the agent is "bob"/, said);
    handoffConnect(cli, repo.alice, h.env, 'alice');

    // bob's first session: who am I, and where.
    const a = await turn(model, h, repo.bob, (_, r) => (r.length === 0 ? { tool: 'whoami' } : undefined));
    assert.match(a.results[0] ?? '', /bob/, `whoami in bob's worktree: ${a.results[0]}`);
    assert.ok((a.results[0] ?? '').includes(repo.bob), `whoami names the worktree: ${a.results[0]}`);

    // alice, outside the repository: sees bob, sends; bob has no live session, so it is queued.
    const needle1 = `wt-${cli}-one-${Date.now().toString(36)}`;
    const b = await turn(model, h, repo.alice, (_, r) =>
      r.length === 0
        ? { tool: 'list_peers' }
        : r.length === 1
          ? { tool: 'send_handoff', args: { to: 'bob', body: `Please review ${needle1}` } }
          : undefined,
    );
    assert.match(b.results[0] ?? '', /bob/, `alice's list_peers shows bob: ${b.results[0]}`);
    assert.match(b.results[1] ?? '', /queued/, `queued while bob has no session: ${b.results[1]}`);
    const id1 = /[0-9A-HJKMNP-TV-Z]{26}/.exec(b.results[1] ?? '')?.[0];
    assert.ok(id1, `a message id in ${b.results[1]}`);

    // bob's next session: the handoff surfaces once; he ACKs it and sees alice.
    let acked1 = false;
    const c = await turn(model, h, repo.bob, (seen, r) => {
      if (!acked1 && seen.includes(needle1)) {
        acked1 = true;
        return { tool: 'ack', args: { message_id: id1 } };
      }
      return acked1 && r.length === 1 ? { tool: 'list_peers' } : undefined;
    });
    assert.equal(c.model.surfacings(needle1), 1, `the handoff entered bob's context once`);
    assert.match(c.results[1] ?? '', /alice/, `bob's list_peers shows alice: ${c.results[1]}`);

    // The recycle: the worktree removed, a fresh one at a new path on the same branch.
    git(repo.root, 'worktree', 'remove', '--force', repo.bob);
    // Made again outside the repository this time: anywhere on disk is a worktree of it.
    const bob2 = join(dirname(repo.root), 'recycled', 'wt-bob');
    git(repo.root, 'worktree', 'add', '-q', bob2, 'wt-bob');

    const needle2 = `wt-${cli}-two-${Date.now().toString(36)}`;
    const d = await turn(model, h, repo.alice, (_, r) =>
      r.length === 0 ? { tool: 'send_handoff', args: { to: 'bob', body: `And ${needle2}` } } : undefined,
    );
    assert.match(d.results[0] ?? '', /queued/, `queued in the gap, never pushed: ${d.results[0]}`);
    assert.doesNotMatch(d.results[0] ?? '', /pushed to/);
    const id2 = /[0-9A-HJKMNP-TV-Z]{26}/.exec(d.results[0] ?? '')?.[0];
    assert.ok(id2);

    let acked2 = false;
    const e = await turn(
      model,
      h,
      bob2,
      (seen) => {
        if (!acked2 && seen.includes(needle2)) {
          acked2 = true;
          return { tool: 'ack', args: { message_id: id2 } };
        }
        return undefined;
      },
      // Gemini runs headless in no folder it has not been told to trust: a harness making one says so.
      { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    );
    assert.equal(e.model.surfacings(needle2), 1, 'the gap handoff entered the new session once');
    assert.equal(e.model.surfacings(needle1), 0, 'the first handoff, ACKed, did not come back');

    // Counted at the hub, as alice: both ACKed by bob, none pushed twice.
    const observer = await connectAgent({ socket: '', name: 'alice', cwd: repo.alice, env: { HOME: h.home } });
    try {
      for (const id of [id1, id2]) {
        const bob = (await observer.ok('get_receipts', { message_id: id })).deliveries[0];
        assert.equal(bob.recipient, 'bob');
        assert.equal(bob.state, 'acked', `${id}: ${JSON.stringify(bob)}`);
        assert.ok(bob.pushes.length <= 1, `pushed at most once: ${JSON.stringify(bob.pushes)}`);
      }
    } finally {
      await observer.close();
    }
    return `${cli}: bob (inside R, then recycled to a folder outside it) and alice (outside R) on one hub; 2 handoffs, 2 ACKs, 0 lost, 0 twice`;
  } finally {
    await model.close();
    await hub.stop().catch(() => undefined);
  }
}

for (const cli of CLIS) {
  describe(`one bus per repository: ${cli}`, () => {
    it(
      'agents in a worktree inside the repository and one outside it share a bus; a recycled worktree keeps its name and its mail',
      { timeout: 600_000 },
      async (t) => {
        if (!cliInstalled(cli)) return skipOrFail(t, `${cli} CLI (npm install)`);
        console.log(`# ${await scenario(cli)}`);
      },
    );
  });
}

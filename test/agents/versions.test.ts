// The agent CLIs as users install them (#45): the other versions .ci/setup-agent-versions.sh put in
// the tools cache — the oldest supported and the newest of each CLI where it differs from the
// devDependency every other agent suite runs. Each runs the real-CLI suites chosen for it (the
// suite files as they are, on that version's binary through HANDOFF_TEST_<CLI>_BIN). A version
// below the oldest supported is checked for saying so: connect in a worktree names what it lacks
// and from which version it works, and so do whoami in its session and the send's answer.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connectAgent } from '../helpers/agent';
import { agentHome, commandRunning, runAgent } from '../helpers/cli/agents';
import { handoffConnect } from '../helpers/cli/connect';
import { startScriptedModel } from '../helpers/cli/scriptedModel';
import { git } from '../helpers/git';
import { NODE, ROOT, spawnHub, startHub as startHubProcess, stoppable, tempDir } from '../helpers/hubProcess';
import { skipOrFail, toolsRoot, whyMissing } from '../helpers/skip.mjs';
import { waitUntil } from '../helpers/wait';

/** Which suites run on which version, and which versions are below the oldest supported. */
const PLAN: Record<
  string,
  { bin: string; env: string; suites?: [file: string, pattern: string][]; unsupported?: true }
> = {
  // Below the oldest supported: in a worktree it runs none of Handoff's hooks; connect must say so.
  '@anthropic-ai/claude-code@2.1.197': { bin: 'claude', env: 'HANDOFF_TEST_CLAUDE_BIN', unsupported: true },
  // The oldest supported: the first that reads the main checkout's hooks in a worktree.
  '@anthropic-ai/claude-code@2.1.211': {
    bin: 'claude',
    env: 'HANDOFF_TEST_CLAUDE_BIN',
    suites: [
      ['worktrees', 'one bus per repository: claude'],
      ['wake', 'attention in claude'],
    ],
  },
  // The newest, with its defaults (non-blocking MCP start, tool search).
  '@anthropic-ai/claude-code@2.1.337': {
    bin: 'claude',
    env: 'HANDOFF_TEST_CLAUDE_BIN',
    suites: [
      ['busy', 'attention in claude'],
      ['wake', 'attention in claude'],
    ],
  },
};

const installed = join(toolsRoot(), 'agent-clis');
const folderOf = (spec: string) => join(installed, spec.replace('/', '+'));
const binOf = (spec: string) => join(folderOf(spec), 'node_modules', '.bin', PLAN[spec].bin);

function missing(spec: string): string | undefined {
  return existsSync(join(folderOf(spec), '.handoff-ok'))
    ? undefined
    : whyMissing('setup-agent-versions', `${spec} in ${installed}`);
}

for (const [spec, plan] of Object.entries(PLAN)) {
  describe(`agent CLI version ${spec}`, () => {
    for (const [file, pattern] of plan.suites ?? [])
      it(`passes test/agents/${file}.test.ts (${pattern})`, { timeout: 900_000 }, (t) => {
        const why = missing(spec);
        if (why) return skipOrFail(t, why);
        const started = Date.now();
        const run = spawnSync(
          NODE,
          ['--test', `--test-name-pattern=${pattern}`, join(ROOT, 'out', 'test', 'agents', `${file}.test.js`)],
          // NODE_TEST_CONTEXT would make the child a part of this run (and skip its files).
          {
            env: { ...process.env, NODE_TEST_CONTEXT: undefined, [plan.env]: binOf(spec) },
            encoding: 'utf8',
            timeout: 840_000,
          },
        );
        const out = `${run.stdout}\n${run.stderr}`;
        assert.equal(run.status, 0, `${spec}: ${file}.test.js failed:\n${out.slice(-6000)}`);
        assert.match(out, /# pass [1-9]/, `${spec}: ${file}.test.js ran something:\n${out.slice(-3000)}`);
        // What the child's tests printed (its `# ` lines, unescaped), but for the runner's summary.
        const said = out
          .split('\n')
          .filter((l) => /^# \\?#/.test(l))
          .map((l) => l.replace(/^[#\s\\]+/, ''));
        console.log(`# ${spec} ${file}: ${Date.now() - started} ms; ${said.join(' | ')}`);
      });

    if (spec.endsWith('@2.1.337'))
      it(
        "with its defaults (non-blocking MCP start, tool search) offers Handoff's tools in the first request, not deferred",
        { timeout: 300_000 },
        async (t) => {
          const why = missing(spec);
          if (why) return skipOrFail(t, why);
          process.env[plan.env] = binOf(spec);
          try {
            await toolsFirst();
          } finally {
            delete process.env[plan.env];
          }
        },
      );

    if (plan.unsupported)
      it(
        'connect in a worktree says what this version cannot do, and so do whoami and the send',
        { timeout: 300_000 },
        async (t) => {
          const why = missing(spec);
          if (why) return skipOrFail(t, why);
          process.env[plan.env] = binOf(spec); // agentHome puts this version's bin first on PATH
          try {
            await unsupportedInWorktree(spec);
          } finally {
            delete process.env[plan.env];
          }
        },
      );
  });
}

async function unsupportedInWorktree(spec: string): Promise<void> {
  const version = spec.split('@').pop()!;
  const base = realpathSync(tempDir('repo'));
  const root = join(base, 'R');
  mkdirSync(root);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'commit', '-q', '--allow-empty', '-m', 'init');
  const wt = join(base, 'wt-bob');
  git(root, 'worktree', 'add', '-q', '-b', 'wt-bob', wt);
  let sent: any;
  const call = 'sleep 3; echo step 1';
  const model = await startScriptedModel(({ step }) =>
    step === 0 ? { tool: 'whoami' } : step === 1 ? { shell: call } : { text: 'Done.' },
  );
  const h = agentHome('claude', model.url);
  const hubProc = spawnHub({
    workspace: root,
    store: join(tempDir('repo-store'), 'store'),
    socket: null,
    env: { HOME: h.home },
  });
  await hubProc.ready;
  const hub = stoppable(hubProc.proc);
  const alice = await connectAgent({ socket: '', name: 'alice', cwd: root, env: { HOME: h.home } });
  try {
    const said = handoffConnect('claude', wt, h.env, 'bob');
    assert.match(said, new RegExp(`Claude Code ${version.replace(/\./g, '\\.')} is connected`), said);
    assert.match(
      said,
      /Not reached everywhere: .*in a worktree none of Handoff's hooks run.*2\.1\.211 and later/s,
      said,
    );
    const sending = waitUntil(() => commandRunning(call), 90_000, 'the shell step running', 20).then(async () => {
      sent = await alice.ok('send_handoff', { to: 'bob', body: 'while you are busy in a worktree' });
    });
    sending.catch(() => undefined);
    // This version reads no permission of the main checkout's in a worktree either: allowed here.
    const run = await runAgent(h, wt, 'Who am I, then run the step.', {
      timeoutMs: 150_000,
      allowedTools: ['Bash', 'mcp__handoff__whoami'],
    });
    await sending;
    assert.equal(run.timedOut, false, run.stderr.slice(-2000));
    // whoami's answer, as the model got it (Claude Code passes the structured result).
    const whoami = model.requests.map((r) => r.text).find((x) => x.includes('live_sessions_of_identity')) ?? '';
    assert.match(whoami, /"limits":\[\\?"Claude Code [\d.]+ reads hooks only from the folder/, whoami.slice(-1500));
    const bob = sent.recipients[0];
    assert.equal(bob.seen_when, 'when_it_calls_inbox');
    assert.match(bob.why ?? '', /2\.1\.211 and later/, JSON.stringify(bob));
    console.log(`# ${spec} in a worktree: connect, whoami and the send's answer say it; why: ${bob.why}`);
  } finally {
    await alice.close();
    await model.close();
    await hub.stop().catch(() => undefined);
  }
}

/** One `claude -p` turn whose model ACKs at once: Handoff's tools must be in request 0, loaded. */
async function toolsFirst(): Promise<void> {
  const hub = await startHubProcess({ socket: null });
  const model = await startScriptedModel(({ step }) => (step === 0 ? { tool: 'whoami' } : { text: 'Done.' }));
  try {
    const h = agentHome('claude', model.url);
    handoffConnect('claude', hub.workspace, h.env, 'bob');
    const run = await runAgent(h, hub.workspace, 'Who am I?', { timeoutMs: 150_000 });
    assert.equal(run.timedOut, false, run.stderr.slice(-2000));
    const first = (model.requests[0]?.body.tools ?? []).filter((x: any) => x.name.startsWith('mcp__handoff__'));
    assert.ok(
      first.some((x: any) => x.name === 'mcp__handoff__ack'),
      `request 0 offers ack: ${JSON.stringify(first.map((x: any) => x.name))}`,
    );
    assert.deepEqual(
      first.filter((x: any) => x.defer_loading).map((x: any) => x.name),
      [],
      'none deferred',
    );
    assert.equal(
      model.requests[0].move && 'name' in model.requests[0].move ? model.requests[0].move.name : '',
      'mcp__handoff__whoami',
      'whoami called at once, no tool search',
    );
    console.log(`# ${first.length} Handoff tools in request 0, none deferred; ${model.requests.length} requests`);
  } finally {
    await model.close();
    await hub.stop();
  }
}

// Keep the plan and the installer in step: every version the installer lists is planned here.
it('the installer and this suite name the same versions', () => {
  const script = readFileSync(join(ROOT, '.ci', 'setup-agent-versions.sh'), 'utf8');
  const listed = /VERSIONS="\$\{HANDOFF_AGENT_VERSIONS:-([^}]*)\}"/.exec(script)?.[1].split(/\s+/).filter(Boolean);
  assert.deepEqual(listed?.sort(), Object.keys(PLAN).sort());
});

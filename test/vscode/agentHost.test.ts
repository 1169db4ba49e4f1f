// VS Code's Agent Host, for real and offline: the VS Code server runs a Claude agent session itself
// (the Claude Agent SDK and its own `claude` binary, from npm: .ci/setup-agent-host.sh) against a
// scripted model on 127.0.0.1, signed in to nothing. Set up as the README tells a user: `handoff
// connect claude` once, in the repository; the editor's window on it runs the hub. A session in the
// main checkout asks the host (its create_session tool) for an independent session in a worktree of
// its own; the host makes `<repo>.worktrees/<slug>` on branch `agents/<slug>`, where nobody ran
// anything. That session is an identity of its own on the bus (named from its branch), a handoff
// sent to it surfaces in its model once through its hooks, and its model ACKs it through Handoff's
// tools; counted at the hub. The extension-host side is agentHostSuite/ (it opens the session).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { hookTraces } from '../helpers/cli/connect';
import { startScriptedModel, type Action } from '../helpers/cli/scriptedModel';
import { DIST, NODE, ROOT } from '../helpers/hubProcess';
import { agentHostMissing, announce, claudeAgentSdkRoot, itNeeds } from '../helpers/tools.mjs';
import { waitFor, waitUntil } from '../helpers/wait';
import { runVsCode } from './harness.mjs';

const missing = agentHostMissing();
announce('the Agent Host test', missing);

/** How many tool rounds the worktree session idles through, waiting for its handoff. */
const MAX_ROUNDS = 90;

describe("VS Code's Agent Host: a Claude session in a worktree the host made", () => {
  itNeeds(
    missing,
    "is an identity of its own on the repository's bus; a handoff to it surfaces in its model once, by its hooks, and it ACKs it through Handoff's tools",
    { timeout: 420_000 },
    async () => {
      const temp = mkdtempSync(join(tmpdir(), 'handoff-agenthost-'));
      const home = join(temp, 'home');
      const repo = join(temp, 'repo');
      mkdirSync(home);
      mkdirSync(repo);
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
          cwd: repo,
          encoding: 'utf8',
        });
      git('init', '-q', '-b', 'main');
      writeFileSync(join(repo, 'README.md'), 'A repository.\n');
      git('add', 'README.md');
      git('commit', '-q', '-m', 'init');
      const env: Record<string, string | undefined> = { ...process.env, HOME: home };
      delete env.CLAUDE_CONFIG_DIR;
      delete env.HANDOFF_HUB;
      execFileSync(NODE, [join(DIST, 'cli.js'), 'connect', 'claude'], { cwd: repo, env, encoding: 'utf8' });

      const tag = Date.now().toString(36);
      const opener = `Start a worktree session ${tag}.`;
      const marker = `worker ${tag}`;
      const needle = `for-the-worktree-${tag}`;
      const forgedBody = `sent through the editor's server ${tag}`;
      const inWorktree = (text: string) => text.includes(marker) && !text.includes(opener);
      let created = false;
      let ackedBy: string | undefined;
      let rounds = 0;
      /** The handoff alice sends to copilot, once the main session's editor server has said hello. */
      let forCopilot: string | undefined;
      // What each session's model got from each Handoff tool it tried: the editor's server
      // (mcp__Handoff__*, the provider's definition) and its own (mcp__handoff__*, from connect).
      const tried = { main: {} as Record<string, string>, worktree: {} as Record<string, string> };
      const pending: { main?: string; worktree?: string } = {};
      const loads: Record<string, number> = {};
      const iAm = (name: string) => new RegExp(`You are ${name} \\(|"identity":\\s*"${name}"`);
      const offered = (r: { tools: string[]; text: string }, tool: string) =>
        r.tools.includes(tool) || r.text.includes(tool);
      // One model for both sessions, told apart by their prompts. Each loads a deferred tool with
      // ToolSearch itself (the model's built-in detour keeps one pending call for whoever asks next).
      const model = await startScriptedModel(
        ({ request: r, lastToolResult }): Action => {
          const where = inWorktree(r.text) ? 'worktree' : 'main';
          const mine = tried[where];
          if (pending[where]) mine[pending[where]] = lastToolResult ?? '';
          pending[where] = undefined;
          /** Calls `tool`, loading it first; one the session was never offered is noted, not called. */
          const attempt = (tool: string, args: Record<string, unknown>): Action | undefined => {
            if (!r.tools.includes(tool)) {
              const key = `${where} ${tool}`;
              if ((loads[key] = (loads[key] ?? 0) + 1) <= 3) return load(tool);
              mine[tool] = 'not offered';
              return undefined;
            }
            pending[where] = tool;
            return { call: tool, args };
          };
          const load = (tool: string): Action => ({ call: 'ToolSearch', args: { query: `select:${tool}` } });
          const step = (tool: string, args: Record<string, unknown> = {}) =>
            tool in mine ? undefined : attempt(tool, args);
          if (where === 'main') {
            // Both servers' tools, as a model with two tools of one name picks either.
            const first = step('mcp__Handoff__whoami') ?? step('mcp__handoff__whoami');
            if (first) return first;
            if (!forCopilot) return rounds++ < MAX_ROUNDS ? { shell: 'sleep 1' } : { text: 'Gave up.' };
            const forged =
              step('mcp__Handoff__ack', { message_id: forCopilot }) ??
              step('mcp__Handoff__send_handoff', { to: 'alice', body: forgedBody });
            if (forged) return forged;
            if (created) return { text: 'Started.' };
            if (!r.tools.includes('mcp__host__create_session')) return load('mcp__host__create_session');
            created = true;
            return {
              call: 'mcp__host__create_session',
              args: { relationship: 'independent', workspace: repo, worktree: true, title: marker, prompt: marker },
            };
          }
          // The worktree session tries the editor's server too, where it is offered, then its own.
          const own =
            (offered(r, 'mcp__Handoff__whoami') ? step('mcp__Handoff__whoami') : undefined) ??
            step('mcp__handoff__whoami');
          if (own) return own;
          const id = r.text.includes(needle) ? /<handoff-body-[0-9a-f]+ id=\\?"([^"\\]+)/.exec(r.text)?.[1] : undefined;
          if (id && !ackedBy) {
            if (!r.tools.includes('mcp__handoff__ack')) return load('mcp__handoff__ack');
            ackedBy = id;
            return { call: 'mcp__handoff__ack', args: { message_id: id } };
          }
          // Busy with a tool round at a time (each ends in its PostToolUse hook) until the handoff came.
          if (ackedBy || rounds++ >= MAX_ROUNDS) return { text: 'Done.' };
          return { shell: 'sleep 1' };
        },
        { maxRequests: 3 * MAX_ROUNDS },
      );
      const done = join(temp, 'done');
      const trace = join(temp, 'hooks.jsonl');
      const vscode = runVsCode({
        extensionPath: ROOT,
        workspace: repo,
        testsPath: join(ROOT, 'out', 'test', 'vscode', 'agentHostSuite', 'index.js'),
        env: {
          HOME: home,
          VSCODE_AGENT_HOST_CLAUDE_SDK_ROOT: claudeAgentSdkRoot(),
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: 'sk-ant-scripted-0000000000000000000000000000',
          // The SDK runs its claude with --dangerously-skip-permissions, which refuses root without it.
          IS_SANDBOX: '1',
          HANDOFF_HOOK_TRACE: trace,
          HANDOFF_TEST_DONE: done,
          HANDOFF_TEST_PROMPT: opener,
        },
        userSettings: {
          'chat.disableAIFeatures': false,
          'chat.agentHost.claudeAgent.enabled': true,
          'chat.agentHost.allowSignedOutWhenUsable': true,
          'chat.tools.global.autoApprove': true,
        },
        timeoutMs: 360_000,
      });
      let alice: Agent | undefined;
      let res: Awaited<typeof vscode> | undefined;
      try {
        // The main checkout's session tried the editor's server first: copilot's name is known from
        // its bridge's hello. A handoff to copilot, which no Copilot session is there to answer.
        await waitFor(
          () => 'mcp__Handoff__whoami' in tried.main,
          240_000,
          () =>
            `the main session's first tool (requests: ${model.requests.length}, errors: ${model.errors.join('; ')})`,
        );
        alice = await connectAgent({
          socket: '',
          name: 'alice',
          cwd: repo,
          env: { HOME: home },
          ownAgentProcess: true,
        });
        const copilotsMail = await waitUntil(
          async () => {
            const r = await alice!.call('send_handoff', { to: 'copilot', body: `Only copilot may ACK this ${tag}` });
            return !r.isError && (r.structuredContent as { message_id: string }).message_id;
          },
          60_000,
          'a handoff to copilot',
        );
        forCopilot = copilotsMail;
        await waitFor(
          () => model.requests.some((r) => inWorktree(r.text)),
          240_000,
          () =>
            `the worktree session's first request (requests: ${model.requests.length}, errors: ${model.errors.join('; ')})`,
        );
        // The host made the worktree beside the repository, on a branch of its own.
        const worktrees = git('worktree', 'list', '--porcelain');
        const folder = /^worktree (.*\.worktrees\/.*)$/m.exec(worktrees)?.[1];
        assert.ok(folder?.startsWith(`${repo}.worktrees/`), worktrees);
        const branch = new RegExp(`^worktree ${folder}\\nHEAD \\w+\\nbranch refs/heads/(.*)$`, 'm').exec(
          worktrees,
        )?.[1];
        assert.match(branch ?? '', /^agents\//, worktrees);
        assert.ok(!existsSync(join(folder!, '.claude', 'settings.local.json')), 'nothing was written in the worktree');

        // The main checkout's session, through either server, is claude, and only claude: the
        // editor's server (for VS Code's own agent) read, ACKed and sent nothing in copilot's name.
        assert.notEqual(tried.main.mcp__Handoff__whoami, 'not offered', "the editor's server was offered: tried");
        console.log(`# main session, the editor's server: ${JSON.stringify(tried.main)}`);
        assert.match(tried.main.mcp__handoff__whoami ?? '', iAm('claude'), 'its own server: claude');
        for (const tool of ['mcp__Handoff__whoami', 'mcp__Handoff__ack', 'mcp__Handoff__send_handoff'])
          assert.match(
            tried.main[tool] ?? '',
            /not_your_channel/,
            `${tool} through the editor's server: ${tried.main[tool]}`,
          );
        const forCopilotNow = (await alice.ok('get_receipts', { message_id: copilotsMail })).deliveries[0];
        assert.deepEqual(forCopilotNow.receipts, [], `no receipt for copilot: ${JSON.stringify(forCopilotNow)}`);
        assert.notEqual(forCopilotNow.state, 'acked');
        assert.deepEqual(
          ((await alice.ok('inbox', {})).messages as { body: string }[]).filter((m) => m.body.includes(forgedBody)),
          [],
          "nothing sent in copilot's name",
        );
        // Its identity, named from its branch, live in its worktree; the main checkout's session is another.
        const peers = await waitUntil(
          async () => {
            const p = (await alice!.ok('list_peers')).peers as any[];
            return p.some((x) => x.live && x.worktrees?.some((w: any) => w.worktree === folder)) && p;
          },
          60_000,
          "the worktree session's identity live on the hub",
        );
        const worker = peers.find((x: any) => x.worktrees?.some((w: any) => w.worktree === folder));
        assert.equal(worker.identity, `claude-${branch!.replace(/\//g, '-')}`);
        assert.deepEqual(worker.worktrees, [{ worktree: folder, branch }]);
        assert.ok(
          peers.some((x: any) => x.identity === 'claude' && x.worktrees?.some((w: any) => w.worktree === repo)),
          `the main checkout's session is "claude": ${JSON.stringify(peers)}`,
        );
        assert.ok(
          !peers.some((x: any) => x.identity === 'copilot' && x.live),
          `copilot is not live, as no Copilot session runs: ${JSON.stringify(peers)}`,
        );

        const sent = await alice.ok('send_handoff', { to: worker.identity, body: `For the worktree: ${needle}` });
        let d: any;
        await waitUntil(
          async () =>
            (d = (await alice!.ok('get_receipts', { message_id: sent.message_id })).deliveries[0]).state === 'acked',
          120_000,
          () => `its ACK: ${JSON.stringify(d)} (requests ${model.requests.length}, errors ${model.errors.join('; ')})`,
        );
        assert.equal(ackedBy, sent.message_id, "its model ACKed the id it saw, through Handoff's tool");
        // The worktree session, through its own server and the editor's where it was offered, is itself.
        console.log(`# worktree session, Handoff's tools: ${JSON.stringify(tried.worktree)}`);
        assert.match(tried.worktree.mcp__handoff__whoami ?? '', iAm(worker.identity), 'its own server: itself');
        if (tried.worktree.mcp__Handoff__whoami !== undefined)
          assert.match(tried.worktree.mcp__Handoff__whoami, /not_your_channel/, "the editor's server: not copilot");
        // Counted at the hub: surfaced once, by one of its Claude hooks, into its session; ACKed by it.
        assert.equal(d.recipient, worker.identity);
        assert.equal(d.surfaced.length, 1, JSON.stringify(d));
        assert.equal(d.surfaced[0].path, 'hook', JSON.stringify(d));
        assert.match(d.surfaced[0].via, /^claude /, JSON.stringify(d));
        assert.deepEqual(
          d.receipts.map((r: any) => [r.kind, r.by, r.channel]),
          [['ack', worker.identity, 'agent']],
        );
        assert.ok(d.pushes.length <= 1, `pushed at most once: ${JSON.stringify(d.pushes)}`);
        // In its model once, and never in the main checkout's session.
        assert.equal(model.surfacings(needle), 1, 'entered the worktree session once');
        assert.deepEqual(
          model.requests.filter((r) => r.text.includes(needle) && !inWorktree(r.text)).map((r) => r.index),
          [],
          "never in the main checkout session's model",
        );
        assert.deepEqual(model.errors, []);
        const runs = hookTraces(trace).filter((t) => t.cli === 'claude');
        assert.ok(
          runs.some((t) => t.ids?.includes(sent.message_id)),
          `a Claude hook surfaced it: ${JSON.stringify(runs)}`,
        );
        console.log(
          `# Agent Host worktree session ${worker.identity} (${folder}): surfaced once by ${d.surfaced[0].via}, ACKed; ${model.requests.length} model requests, ${runs.length} hook runs`,
        );
      } finally {
        writeFileSync(done, '');
        await alice?.close().catch(() => undefined);
        res = await vscode;
        await model.close();
        if (res.exitCode !== 0) console.log(res.logs.slice(-6000));
        rmSync(temp, { recursive: true, force: true }); // the repository and the host's worktrees beside it
      }
      assert.equal(res.exitCode, 0, 'the editor ran to the end');
    },
  );
});

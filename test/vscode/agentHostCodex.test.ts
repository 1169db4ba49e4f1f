// VS Code's Agent Host running a Codex session, for real and offline (#45.5): the VS Code server
// runs Codex itself (`codex app-server`, the binary from this checkout's @openai/codex) against a
// scripted model on 127.0.0.1, signed in to nothing. Set up as the README tells a user: `handoff
// connect codex` once; the editor's window runs the hub. The session in the main checkout is
// codex on the bus, through its own server; the editor's server, which the host starts under
// Codex too, is not copilot (#42). Not driven here: a handoff reaching its model and its ACK (the
// host's code mode, below). The extension-host side is agentHostSuite/ (HANDOFF_TEST_AGENT=codex).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { hookTraces } from '../helpers/cli/connect';
import { startScriptedModel } from '../helpers/cli/scriptedModel';
import { DIST, NODE, ROOT } from '../helpers/hubProcess';
import { announce, firstMissing, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { waitFor, waitUntil } from '../helpers/wait';
import { runVsCode } from './harness.mjs';

const CODEX = join(
  ROOT,
  'node_modules',
  '@openai',
  'codex-linux-x64',
  'vendor',
  'x86_64-unknown-linux-musl',
  'bin',
  'codex',
);
const missing = firstMissing(
  vscodeMissing(),
  existsSync(CODEX) ? undefined : `the Codex binary at ${CODEX} (a devDependency: run \`npm install\`)`,
);
announce('the Agent Host Codex test', missing);

/** The command lines of the Handoff bridges whose parent runs the executable `exe`, from /proc. */
function bridgesUnder(exe: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (!argv.some((a) => a.endsWith('bridge.js'))) continue;
      const ppid = /^PPid:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      if (ppid && basename(readlinkSync(`/proc/${ppid}/exe`)) === exe) out.push(argv.join(' ').trim());
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe("VS Code's Agent Host: a Codex session", () => {
  itNeeds(
    missing,
    "is codex on the repository's bus through its own server; the editor's server it starts is not copilot",
    { timeout: 420_000 },
    async () => {
      const temp = mkdtempSync(join(tmpdir(), 'handoff-agenthost-codex-'));
      const home = join(temp, 'home');
      const repo = join(temp, 'repo');
      mkdirSync(join(home, '.codex'), { recursive: true });
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
      // The host checkpoints each turn with a git commit of its own, which needs an author.
      writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = t\n\temail = t@example.com\n');

      const tag = Date.now().toString(36);
      const opener = `Wait for work ${tag}.`;
      // The host runs Codex in code mode with a model of its own choosing: every tool, MCP ones too,
      // sits inside the request's input under one JavaScript `exec` tool, which this scripted model
      // does not drive. So the model only answers; the bus is checked from outside.
      const model = await startScriptedModel(() => ({ text: 'Done.' }), { sideText: 'Done.' });
      writeFileSync(
        join(home, '.codex', 'config.toml'),
        [
          'model = "scripted-model"',
          'model_provider = "scripted"',
          'approval_policy = "never"',
          'sandbox_mode = "danger-full-access"',
          'check_for_update_on_startup = false',
          '',
          '[model_providers.scripted]',
          'name = "scripted"',
          `base_url = "${model.url}/v1"`,
          'wire_api = "responses"',
          'requires_openai_auth = false',
          'request_max_retries = 0',
          'stream_max_retries = 0',
          '',
          '[analytics]',
          'enabled = false',
          '',
        ].join('\n'),
      );
      const env: Record<string, string | undefined> = { ...process.env, HOME: home, CODEX_HOME: join(home, '.codex') };
      delete env.HANDOFF_HUB;
      const connected = execFileSync(NODE, [join(DIST, 'cli.js'), 'connect', 'codex'], {
        cwd: repo,
        env,
        encoding: 'utf8',
      });

      const done = join(temp, 'done');
      const trace = join(temp, 'hooks.jsonl');
      const vscode = runVsCode({
        extensionPath: ROOT,
        workspace: repo,
        testsPath: join(ROOT, 'out', 'test', 'vscode', 'agentHostSuite', 'index.js'),
        env: {
          HOME: home,
          CODEX_HOME: join(home, '.codex'),
          VSCODE_AGENT_HOST_CODEX_SDK_ROOT: ROOT,
          HANDOFF_HOOK_TRACE: trace,
          HANDOFF_TEST_DONE: done,
          HANDOFF_TEST_PROMPT: opener,
          HANDOFF_TEST_AGENT: 'codex',
        },
        userSettings: {
          'chat.disableAIFeatures': false,
          'chat.agentHost.codexAgent.enabled': true,
          'chat.editor.codex.preferAgentHost': true,
          'chat.agentHost.allowSignedOutWhenUsable': true,
          'chat.tools.global.autoApprove': true,
          'security.workspace.trust.enabled': false,
        },
        timeoutMs: 360_000,
        keepTemp: !!process.env.HANDOFF_KEEP_TEMP,
      });
      let alice: Agent | undefined;
      let res: Awaited<typeof vscode> | undefined;
      let passed = false;
      try {
        await waitFor(
          () => [...model.requests, ...model.side].some((r) => r.text.includes(opener)),
          150_000,
          () => `the session's first request (errors: ${model.errors.join('; ')})`,
        );
        // The host started both Handoff servers as children of Codex: its own (connect) and the editor's.
        const underCodex = () => bridgesUnder('codex');
        await waitFor(
          () =>
            underCodex().some((b) => b.includes('--name copilot')) &&
            underCodex().some((b) => b.includes('--cli codex')),
          60_000,
          () => `both servers under codex: ${JSON.stringify(underCodex())}`,
        );
        alice = await connectAgent({
          socket: '',
          name: 'alice',
          cwd: repo,
          env: { HOME: home },
          ownAgentProcess: true,
        });
        const peers = await waitUntil(
          async () => {
            const p = (await alice!.ok('list_peers')).peers as any[];
            return p.some((x) => x.identity === 'codex' && x.live) && p;
          },
          60_000,
          'codex live',
        );
        // copilot is known (the editor's server said hello) but not live: no Copilot session runs.
        assert.ok(
          peers.some((x: any) => x.identity === 'copilot' && !x.live),
          `copilot known, not live: ${JSON.stringify(peers)}`,
        );
        const codex = peers.find((x: any) => x.identity === 'codex');
        // One entry per live session: the host restarts a thread to apply its client tools, each with servers of its own.
        assert.deepEqual(
          new Set(codex.worktrees.map((w: any) => `${w.worktree} ${w.branch}`)),
          new Set([`${repo} main`]),
        );
        const runs = hookTraces(trace).filter((t) => t.cli === 'codex');
        console.log(
          `# Agent Host Codex session: codex live (${codex.live_sessions} sessions), copilot not; under codex: ${underCodex().join(' | ')}; ${model.requests.length + model.side.length} model requests, Codex hook runs: ${runs.map((t) => t.event).join(', ') || 'none'}; connect said: ${connected.split('\n')[0]}`,
        );
        passed = true;
      } finally {
        writeFileSync(done, '');
        await alice?.close().catch(() => undefined);
        res = await vscode;
        await model.close();
        if (res.exitCode !== 0 || !passed)
          console.log(res.logs.slice(-6000), (res as { tempDir?: string }).tempDir ?? '');
        rmSync(temp, { recursive: true, force: true });
      }
      assert.equal(res.exitCode, 0, 'the editor ran to the end');
    },
  );
});

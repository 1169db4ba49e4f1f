// An extension update, as a user lives it: version A installed from its .vsix connects the real
// Claude Code CLI ("Handoff: Connect Claude Code"); version B (a rebuilt .vsix, version bumped in
// a staged copy of the manifest) is installed and A's folder deleted. Claude Code, with the config
// A wrote, still connects its bridge (`claude mcp list`), reaches B's hub (whoami over the bridge)
// and runs its hooks (a waiting handoff surfaces once); with no editor at all, the same turn gets
// the no-hub message naming the fix, and exits cleanly.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'node:test';
import { agentHome, CLI_BIN, oneShotCommand, runAgent, trustClaudeFolder } from '../helpers/cli/agents';
import type { HookTrace } from '../helpers/cli/connect';
import { startScriptedModel, type Script } from '../helpers/cli/scriptedModel';
import { ROOT, tempDir } from '../helpers/hubProcess';
import { announce, claudeMissing, firstMissing, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { runVsCode } from './harness.mjs';
import { bumpedVersion, checkoutVersion, installVsix, packageVsix } from './vsix';

const missing = firstMissing(vscodeMissing(), claudeMissing(ROOT));
announce('the extension-update suite', missing);

const PROBE = join(ROOT, 'test', 'vscode', 'installed');
const AGENT = 'updater';
const PROMPT = 'Who are you on the Handoff bus?';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}
interface StepResult {
  extensionPath: string;
  mcpList?: Ran;
  turn?: Ran;
}

describe('Handoff updated from one .vsix to the next', () => {
  itNeeds(
    missing,
    'Claude Code connected by version A keeps its bridge and hooks under version B, and without an editor is told why',
    { timeout: 480_000 },
    async () => {
      const dir = tempDir('update');
      const [versionA, versionB] = [checkoutVersion(), bumpedVersion()];
      const vsixA = packageVsix(dir);
      const vsixB = packageVsix(dir, versionB);
      const extensions = join(dir, 'extensions');
      const serverData = join(dir, 'server-data');
      const dataHome = join(dir, 'data'); // XDG_DATA_HOME: the launchers live in <it>/handoff
      const workspace = join(dir, 'workspace');
      mkdirSync(workspace, { recursive: true });
      const launchers = join(dataHome, 'handoff');
      const folder = (v: string) => join(extensions, `handoff.handoff-bus-${v}`);

      // Each turn the model asks whoami once, then ends; what the tool answered is kept per turn.
      const whoami: string[] = [];
      const whoamiTurn = (): Script => {
        let asked = false;
        return ({ lastToolResult }) => {
          if (!asked) {
            asked = true;
            return { tool: 'whoami' };
          }
          whoami.push(lastToolResult ?? '');
          return { text: 'Done.' };
        };
      };
      const model = await startScriptedModel(whoamiTurn(), { maxRequests: 10 });
      const trace = join(dir, 'hook-trace.jsonl');
      // One TMPDIR for the editor and the agent: without /run/user/<uid> the hub's socket lives there.
      const tmp = join(dir, 'tmp');
      mkdirSync(tmp);
      const claude = agentHome('claude', model.url, { env: { HANDOFF_HOOK_TRACE: trace, TMPDIR: tmp } });
      const traces = (): HookTrace[] =>
        existsSync(trace)
          ? readFileSync(trace, 'utf8')
              .trim()
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l) as HookTrace)
          : [];

      /** One window of the installed extension running one step of installed/update.js. */
      async function step(
        kind: 'connect' | 'updated',
        version: string,
        extra: Record<string, unknown> = {},
      ): Promise<StepResult> {
        const resultFile = join(dir, `${kind}.json`);
        const res = await runVsCode({
          extensionPath: PROBE,
          testsPath: join(PROBE, 'update.js'),
          workspace,
          extensionsDir: extensions,
          // The editor's HOME is the agent's: Connect writes the ~/.claude.json that claude reads.
          env: {
            HOME: claude.home,
            TMPDIR: tmp,
            XDG_DATA_HOME: dataHome,
            HANDOFF_UPDATE_PROBE: JSON.stringify({ kind, version, agent: AGENT, resultFile, ...extra }),
          },
          timeoutMs: 240_000,
        });
        const lines = res.logs
          .split('\n')
          .filter((l) => /update-probe|Error|rror:|handoff/i.test(l))
          .slice(-40)
          .join('\n');
        assert.equal(
          res.exitCode,
          0,
          `step ${kind} failed (timed out: ${res.timedOut}):\n${lines}\n${res.error?.stack ?? ''}`,
        );
        return JSON.parse(readFileSync(resultFile, 'utf8')) as StepResult;
      }

      try {
        // Version A, and Connect.
        installVsix(vsixA, extensions, serverData);
        assert.ok(existsSync(folder(versionA)), `A is installed in ${folder(versionA)}`);
        const a = await step('connect', versionA);
        assert.equal(a.extensionPath, folder(versionA));
        const server = JSON.parse(readFileSync(join(claude.home, '.claude.json'), 'utf8')).projects[workspace]
          .mcpServers.handoff as { command: string; args: string[] };
        assert.equal(server.command, join(launchers, 'bin', 'node'), 'the bridge runs on the stable Node launcher');
        assert.equal(server.args[0], join(launchers, 'dist', 'bridge.js'), 'from the stable build link');
        const settings = readFileSync(join(workspace, '.claude', 'settings.local.json'), 'utf8');
        assert.ok(settings.includes(join(launchers, 'dist', 'hook.js')), 'the hooks run from the stable build link');
        for (const written of [JSON.stringify(server), settings])
          assert.ok(!written.includes(folder(versionA)), `nothing names A's folder: ${written}`);
        assert.equal(realpathSync(join(launchers, 'dist')), join(folder(versionA), 'dist'));

        // Version B; A's folder gone.
        installVsix(vsixB, extensions, serverData);
        rmSync(folder(versionA), { recursive: true, force: true });
        assert.ok(!existsSync(folder(versionA)) && existsSync(folder(versionB)), 'only B is left');
        trustClaudeFolder(claude, workspace);
        const needle = `release-notes-${Date.now().toString(36)}`;
        const { args: turnArgs } = oneShotCommand(claude, workspace, PROMPT);
        const b = await step('updated', versionB, {
          handoff: `Please review ${needle}`,
          claude: CLI_BIN.claude,
          turnArgs,
          env: claude.env,
        });
        assert.equal(b.extensionPath, folder(versionB));
        assert.equal(
          realpathSync(join(launchers, 'dist')),
          join(folder(versionB), 'dist'),
          "B's activation re-pointed the launchers",
        );

        assert.match(
          b.mcpList!.stdout,
          /^handoff: .*bridge\.js --cli claude --name updater .*- ✔ Connected$/m,
          `claude mcp list:\n${b.mcpList!.stdout}${b.mcpList!.stderr}`,
        );
        assert.equal(b.turn!.code, 0, `the turn: ${b.turn!.stderr.slice(-1500)}`);
        assert.deepEqual(model.errors, []);
        assert.equal(whoami.length, 1, 'one turn, one whoami');
        assert.match(whoami[0], /"identity":"updater"/, `the bridge reached B's hub: ${whoami[0]}`);
        assert.equal(model.surfacings(needle), 1, 'the waiting handoff entered the context once, by a hook');
        const answered = traces().filter((t) => t.outcome === 'answered' && t.ids?.length);
        assert.ok(answered.length >= 1, `a hook answered with the handoff: ${JSON.stringify(traces())}`);

        // No editor, no hub: the same turn is told why, and nothing crashes.
        const hookRunsBefore = traces().length;
        model.setScript(whoamiTurn());
        const alone = await runAgent(claude, workspace, PROMPT, { timeoutMs: 120_000 });
        assert.equal(alone.code, 0, `claude without an editor: ${alone.stderr.slice(-1500)}`);
        assert.equal(whoami.length, 2);
        assert.match(
          whoami[1],
          /no_hub.*No Handoff hub .*Open the folder in VS Code with the Handoff extension/,
          `the model is told why: ${whoami[1]}`,
        );
        const alonesHooks = traces().slice(hookRunsBefore);
        assert.ok(
          alonesHooks.length >= 1 && alonesHooks.every((t) => t.outcome === 'no hub'),
          `the hooks ran and found no hub: ${JSON.stringify(alonesHooks)}`,
        );
        console.log(
          `# update ${versionA} → ${versionB}: bridge ✔ Connected, whoami as ${AGENT}, handoff surfaced by ${[...new Set(answered.map((t) => t.event))].join(', ')}; without an editor: no_hub in the tool result, ${alonesHooks.length} hook runs found no hub`,
        );
      } finally {
        await model.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

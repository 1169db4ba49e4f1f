// The harness checks itself against the real CLIs, with throwaway configs (probes.ts), not
// Handoff's: (a) an MCP tool is offered and runs unprompted, (b) a shell call runs, (c) a hook's
// context reaches the next model request, (d) a Stop/AfterAgent block continues the turn once,
// (e) in Claude Code and Codex a hook that is an MCP tool call works too — and, for Claude Code
// under tmux, an asyncRewake hook wakes an idle session.
// Not part of `npm test`. Run: node out/test/helpers/cli/selftest.js [claude|codex|gemini|tmux …]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../hubProcess';
import { agentHome, cliInstalled, runAgent, type Cli } from './agents';
import { codexHooks } from './codexAppServer';
import { configureClaude, configureCodex, configureGemini, writeProbes, type Probes } from './probes';
import { mcpToolName, startScriptedModel, type ScriptedModel } from './scriptedModel';
import { startInteractiveClaude, tmuxAvailable } from './tmux';
import type { Wire } from './conversation';

const WIRE: Record<Cli, Wire> = { claude: 'anthropic', codex: 'openai', gemini: 'gemini' };
const AFTER_TOOL: Record<Cli, string> = { claude: 'PostToolUse', codex: 'PostToolUse', gemini: 'AfterTool' };
let failures = 0;

function check(what: string, ok: boolean, detail = ''): void {
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? ` — ${detail}` : ''}`);
}

// SELFTEST_DUMP=<dir>: keep every request the model saw, to read what each CLI really sends.
function dump(name: string, model: ScriptedModel): void {
  const dir = process.env.SELFTEST_DUMP;
  if (dir) writeFileSync(join(dir, `${name}.json`), JSON.stringify({ requests: model.requests, side: model.side, other: model.other }, null, 1));
}

function where(model: ScriptedModel, needle: string): string {
  return model.insertions(needle).map((x) => `#${x.request} ${x.item.role}/${x.item.kind}`).join(', ') || 'nowhere';
}

/** Session ids each side saw: the hooks' stdin, and whatever the MCP server's env holds. */
function correlation(cli: Cli, p: Probes): void {
  const hooks = p.entries().filter((e) => e.kind === 'hook' && e.cli === cli);
  const mcp = p.entries().filter((e) => e.kind === 'mcp');
  const sessions = [...new Set(hooks.map((e) => e.stdin?.session_id))];
  const mcpEnv = mcp[0]?.env ?? {};
  const carrying = Object.keys(mcpEnv).filter((k) => sessions.some((s) => s && mcpEnv[k]?.includes?.(s)));
  const agentVars = Object.keys(mcpEnv).filter((k) => /^(CLAUDE|CODEX|GEMINI)/.test(k));
  console.log(`     hook session_id: ${sessions.join(', ')}; hook env session vars: ${Object.keys(hooks[0]?.env ?? {}).filter((k) => /SESSION|THREAD/.test(k)).join(', ') || 'none'}`);
  const shared = mcp[0]?.ancestors?.[0];
  console.log(`     MCP server's parent pid ${shared} is an ancestor of every hook: ${hooks.length > 0 && hooks.every((e) => e.ancestors?.includes(shared))}`);
  const rpc = p.entries().filter((e) => e.kind === 'rpc').map((e) => e.message);
  const init = rpc.find((m) => m.method === 'initialize')?.params;
  const call = rpc.find((m) => m.method === 'tools/call')?.params;
  console.log(`     MCP initialize: clientInfo ${JSON.stringify(init?.clientInfo)}, capabilities ${JSON.stringify(init?.capabilities)}; tools/call _meta: ${JSON.stringify(call?._meta)}`);
  if (process.env.SELFTEST_DUMP) writeFileSync(join(process.env.SELFTEST_DUMP, `${cli}-probe-log.json`), JSON.stringify(p.entries(), null, 1));
  console.log(`     MCP server env vars from the CLI: ${agentVars.join(', ') || 'none'}; holding the session id: ${carrying.join(', ') || 'none'}; MCP argv: ${JSON.stringify(mcp[0]?.argv)}`);
}

async function oneShot(cli: Cli): Promise<void> {
  console.log(`\n# ${cli}`);
  if (!cliInstalled(cli)) return check(`${cli} installed`, false, 'npm install');
  const model = await startScriptedModel(
    ({ step }) => [{ tool: 'ping' }, { shell: 'echo SHELL-OK' }, { text: 'first answer' }, { text: 'answer after the stop block' }][step] ?? { text: 'extra' },
    { server: 'probe' },
  );
  const p = writeProbes(tempDir('probes'));
  const h = agentHome(cli, model.url);
  const ws = tempDir(`${cli}-ws`);
  try {
    if (cli === 'claude') configureClaude(h, ws, p);
    else if (cli === 'codex') configureCodex(h, p);
    else configureGemini(h, ws, p);
    if (cli === 'codex') {
      const listed = await codexHooks(h, ws);
      check('codex: hooks/list says our recipe-trusted hooks are trusted', listed.hooks.length === 5 && listed.hooks.every((x) => x.trustStatus === 'trusted'), listed.hooks.map((x) => `${x.eventName}:${x.trustStatus}`).join(' '));
    }
    const run = await runAgent(h, ws, 'scripted self-test', { allowedTools: ['Bash', 'mcp__probe__ping'], timeoutMs: 60_000 });
    check(`${cli}: exit 0 in ${run.durationMs} ms`, run.code === 0 && !run.timedOut, run.code === 0 ? '' : `code ${run.code}\n${run.stderr.slice(-2000)}`);
    check(`${cli}: the scripted model made no mistakes`, model.errors.length === 0, model.errors.join('; '));
    const ping = mcpToolName(WIRE[cli], 'probe', 'ping');
    const detour = model.requests.some((r) => r.move?.type === 'call' && r.move.name === 'ToolSearch');
    check(`(a) ${cli}: ${ping} offered${detour ? ' (after a ToolSearch)' : ''} and ran unprompted`, model.firstRequestWith('PONG-FROM-PROBE') > 0, where(model, 'PONG-FROM-PROBE'));
    check(`(b) ${cli}: the shell ran`, model.insertions('SHELL-OK').some((x) => x.item.kind === 'tool_result'), where(model, 'SHELL-OK'));
    for (const ev of ['SessionStart', cli === 'gemini' ? 'BeforeAgent' : 'UserPromptSubmit', AFTER_TOOL[cli]]) {
      check(`(c) ${cli}: ${ev} additionalContext reached the model`, model.firstRequestWith(`MARKER-123:${ev}`) >= 0, where(model, `MARKER-123:${ev}`));
    }
    if (cli !== 'gemini') {
      const calls = p.entries().filter((e) => e.kind === 'hookctx');
      const session = p.entries().find((e) => e.kind === 'hook')?.stdin?.session_id;
      check(`(e) ${cli}: an mcp_tool hook (a call on the session's MCP connection) reached the model`, model.firstRequestWith('MCPHOOK-321') > 0 && calls.length > 0 && calls.every((c) => c.args.session === session), `${where(model, 'MCPHOOK-321')}; ${calls.length} calls with session ${calls[0]?.args.session}`);
    }
    const stopped = model.surfacings('STOP-MARKER-456');
    const last = model.requests.at(-1)!;
    check(`(d) ${cli}: the Stop block continued the turn once`, stopped === 1 && last.text.includes('STOP-MARKER-456') && last.move?.type === 'text', `${stopped} surfacing(s), at ${where(model, 'STOP-MARKER-456')}; ${model.requests.length} requests`);
    console.log(`     requests: ${model.requests.length} main, ${model.side.length} side; other paths: ${model.other.join(', ') || 'none'}`);
    correlation(cli, p);
  } finally {
    dump(cli, model);
    await model.close();
  }
}

async function interactiveClaude(): Promise<void> {
  console.log('\n# claude, interactive under tmux (asyncRewake on Stop)');
  if (!tmuxAvailable()) return check('tmux installed', false, 'apt-get install -y tmux');
  let wokenAt = 0;
  const model = await startScriptedModel(({ step }) => {
    if (step === 1) wokenAt = Date.now();
    return [{ text: 'first turn done' }, { tool: 'ping' }, { text: 'woken turn done' }][step] ?? { text: 'extra' };
  }, { server: 'probe' });
  const p = writeProbes(tempDir('probes'));
  const h = agentHome('claude', model.url);
  const ws = tempDir('claude-tmux-ws');
  configureClaude(h, ws, p, { wake: true });
  const started = Date.now();
  const tmux = startInteractiveClaude(h, ws, { args: ['--allowedTools', 'Bash,mcp__probe__ping'] });
  try {
    await tmux.waitForScreen(/❯/, 30_000);
    console.log(`     interactive prompt ready in ${Date.now() - started} ms`);
    await tmux.submit('first prompt');
    await model.waitForText('first prompt', 20_000);
    await model.waitForText('PONG-FROM-PROBE', 20_000);
    const woke = p.entries().find((e) => e.kind === 'hook' && e.mode === 'wake');
    const wokenFile = Number(readFileSync(join(p.dir, 'woken'), 'utf8'));
    check('claude tmux: the waiter saw CLAUDE_CODE_ENTRYPOINT=cli', woke?.env?.CLAUDE_CODE_ENTRYPOINT === 'cli', String(woke?.env?.CLAUDE_CODE_ENTRYPOINT));
    check('claude tmux: exit 2 + stderr woke the idle session', model.firstRequestWith('WAKE-789') > 0, `${where(model, 'WAKE-789')} ${JSON.stringify(model.insertions('WAKE-789')[0]?.item.text.slice(0, 160))}; woken ${wokenAt - wokenFile} ms after the hook exited`);
    check('claude tmux: the woken turn ran the MCP tool', model.firstRequestWith('PONG-FROM-PROBE') > 0, where(model, 'PONG-FROM-PROBE'));
    check('claude tmux: no script mistakes', model.errors.length === 0, model.errors.join('; '));
  } catch (e) {
    check('claude tmux', false, `${(e as Error).message}\n${tmux.screen()}`);
  } finally {
    tmux.kill();
    dump('claude-tmux', model);
    await model.close();
  }
}

(async () => {
  const which = process.argv.slice(2);
  const want = (x: string) => which.length === 0 || which.includes(x);
  for (const cli of ['claude', 'codex', 'gemini'] as const) if (want(cli)) await oneShot(cli);
  if (want('tmux')) await interactiveClaude();
  console.log(failures ? `\n${failures} check(s) failed` : '\nall checks passed');
  process.exit(failures ? 1 : 0);
})();

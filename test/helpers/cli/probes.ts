// Throwaway stand-ins for what `handoff connect` installs, used only by the harness self-test: an
// MCP server with one read-only tool `ping`, and a hook that injects a marker and blocks Stop
// once. Both log their stdin/env, which is how NOTES.md answers "what does each CLI pass?".
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { NODE, ROOT } from '../hubProcess';
import { CLI_BIN, trustGeminiFolder, type AgentHome } from './agents';

export interface Probes {
  dir: string;
  server: string;
  hook: string;
  /** One JSON object per line: {kind: 'mcp', env, argv} at server start, {kind: 'rpc', message} per client message, {kind: 'hook', cli, event, stdin, env}. */
  log: string;
  entries(): any[];
}

// Parent pids up to init, from /proc: an MCP server and a hook of one session share the CLI as ancestor.
const ANCESTORS = `const ancestors = () => { const out = []; let pid = process.ppid; while (pid > 1 && out.length < 20) { out.push(pid); try { pid = Number(fs.readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ')[1]); } catch { break; } } return out; };`;

export function writeProbes(dir: string): Probes {
  mkdirSync(dir, { recursive: true });
  const log = join(dir, 'probe-log.jsonl');
  const sdk = join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'cjs', 'server');
  const server = join(dir, 'probe-server.js');
  writeFileSync(
    server,
    `const fs = require('fs');
${ANCESTORS}
const { McpServer } = require(${JSON.stringify(join(sdk, 'mcp.js'))});
const { StdioServerTransport } = require(${JSON.stringify(join(sdk, 'stdio.js'))});
const { z } = require(${JSON.stringify(join(ROOT, 'node_modules', 'zod'))});
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ kind: 'mcp', argv: process.argv.slice(2), cwd: process.cwd(), env: process.env, ancestors: ancestors(), at: Date.now() }) + '\\n');
const s = new McpServer({ name: 'probe', version: '1.0.0' });
// argv[2]: the tool's annotations as JSON (default read-only), to see what each CLI runs unprompted.
const annotations = process.argv[2] ? JSON.parse(process.argv[2]) : { readOnlyHint: true, openWorldHint: false };
s.registerTool('ping', { description: 'Answers pong.', annotations }, async () => ({ content: [{ type: 'text', text: 'PONG-FROM-PROBE' }] }));
// Log what the client says too: clientInfo, capabilities, and any _meta on tool calls.
const t = new StdioServerTransport();
// A tool a CLI's mcp_tool hook can call: its text is hook output JSON carrying a marker.
s.registerTool('hookctx', { description: 'Hook output for an event.', inputSchema: { event: z.string().optional(), session: z.string().optional(), active: z.any().optional() }, annotations: { readOnlyHint: true, openWorldHint: false } }, async (args) => {
  fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ kind: 'hookctx', args, at: Date.now() }) + '\\n');
  const out = args.event === 'Stop'
    ? (String(args.active) === 'true' ? {} : { decision: 'block', reason: 'MCPSTOP-654 via the MCP connection' })
    : { hookSpecificOutput: { hookEventName: args.event, additionalContext: 'MCPHOOK-321 via the MCP connection' } };
  return { content: [{ type: 'text', text: JSON.stringify(out) }] };
});
s.connect(t).then(() => {
  const inner = t.onmessage;
  t.onmessage = (m) => { fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ kind: 'rpc', message: m, at: Date.now() }) + '\\n'); inner(m); };
});
`,
  );
  // argv: <cli> <event> [wake]. Prints each CLI's shape; blocks Stop/AfterAgent once per turn.
  const hook = join(dir, 'probe-hook.js');
  writeFileSync(
    hook,
    `const fs = require('fs');
${ANCESTORS}
const [cli, event, mode] = process.argv.slice(2);
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', () => {
  let stdin; try { stdin = JSON.parse(input); } catch { stdin = input; }
  fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ kind: 'hook', cli, event, mode, stdin, env: process.env, ancestors: ancestors(), at: Date.now() }) + '\\n');
  if (mode === 'wake') {
    // Claude asyncRewake: a background waiter; in -p (entrypoint sdk-cli) leave at once, or -p waits for it.
    if (process.env.CLAUDE_CODE_ENTRYPOINT !== 'cli' || fs.existsSync(${JSON.stringify(join(dir, 'woken'))})) process.exit(0);
    setTimeout(() => { fs.writeFileSync(${JSON.stringify(join(dir, 'woken'))}, String(Date.now())); process.stderr.write('WAKE-789 a handoff arrived'); process.exit(2); }, 1000);
    return;
  }
  const stop = event === 'Stop' || event === 'AfterAgent';
  const out = stop
    ? (stdin.stop_hook_active ? {} : { decision: 'block', reason: 'STOP-MARKER-456 keep going once' })
    : { hookSpecificOutput: { hookEventName: event, additionalContext: 'MARKER-123:' + event } };
  process.stdout.write(JSON.stringify(out));
});
`,
  );
  return {
    dir,
    server,
    hook,
    log,
    entries: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []),
  };
}

const hookCmd = (p: Probes, cli: string, event: string, mode = '') => `${NODE} ${p.hook} ${cli} ${event}${mode ? ` ${mode}` : ''}`;

/** Claude Code: `claude mcp add` (local scope) + hooks in <ws>/.claude/settings.local.json. */
export function configureClaude(h: AgentHome, ws: string, p: Probes, opts: { wake?: boolean } = {}): void {
  execFileSync(CLI_BIN.claude, ['mcp', 'add', '--scope', 'local', 'probe', '--', NODE, p.server], { cwd: ws, env: h.env, stdio: 'pipe' });
  const entry = (event: string, matcher?: string) => [{ ...(matcher ? { matcher } : {}), hooks: [{ type: 'command', command: hookCmd(p, 'claude', event), timeout: 10 }] }];
  const hooks: Record<string, unknown> = { SessionStart: entry('SessionStart'), UserPromptSubmit: entry('UserPromptSubmit'), PostToolUse: [...entry('PostToolUse', '*'), { matcher: '*', hooks: [MCP_HOOK] }], Stop: entry('Stop') };
  if (opts.wake) hooks.Stop = [{ hooks: [{ type: 'command', command: hookCmd(p, 'claude', 'Stop', 'wake'), asyncRewake: true, timeout: 3600 }] }];
  mkdirSync(join(ws, '.claude'), { recursive: true });
  writeFileSync(join(ws, '.claude', 'settings.local.json'), JSON.stringify({ hooks }, null, 2));
}

/** The trust hash Codex 0.171 records for a hook handler (recipe in NOTES.md). */
export function codexHookHash(label: string, matcher: string | undefined, handler: Record<string, unknown>): string {
  const canon = (v: any): any => (Array.isArray(v) ? v.map(canon) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
  const normalized = handler.type === 'command' ? { ...handler, timeout: Math.max(1, Number(handler.timeout ?? 600)), async: !!handler.async } : { ...handler, timeout: handler.timeout ?? 600 };
  const identity: any = { event_name: label, hooks: [normalized] };
  if (matcher !== undefined && label !== 'stop' && label !== 'user_prompt_submit') identity.matcher = matcher;
  return `sha256:${createHash('sha256').update(JSON.stringify(canon(identity))).digest('hex')}`;
}

// A hook that is a tools/call on the session's own MCP connection (Claude Code and Codex).
const MCP_HOOK = { type: 'mcp_tool', server: 'probe', tool: 'hookctx', input: { event: 'PostToolUse', session: '${session_id}' }, timeout: 10 };

/** Codex: [mcp_servers.probe] + $CODEX_HOME/hooks.json, each hook trusted by hash in config.toml. */
export function configureCodex(h: AgentHome, p: Probes, opts: { trust?: boolean } = {}): void {
  const events: Array<[string, string, string | undefined]> = [
    ['SessionStart', 'session_start', undefined],
    ['UserPromptSubmit', 'user_prompt_submit', undefined],
    ['PostToolUse', 'post_tool_use', '*'],
    ['Stop', 'stop', undefined],
  ];
  const hooksPath = join(h.configDir, 'hooks.json');
  const doc: any = { hooks: {} };
  let toml = `\n[mcp_servers.probe]\ncommand = ${JSON.stringify(NODE)}\nargs = [${JSON.stringify(p.server)}]\n`;
  for (const [event, label, matcher] of events) {
    const handlers = [{ type: 'command', command: hookCmd(p, 'codex', event), timeout: 10 }, ...(event === 'PostToolUse' ? [MCP_HOOK] : [])];
    doc.hooks[event] = handlers.map((handler) => ({ ...(matcher ? { matcher } : {}), hooks: [handler] }));
    handlers.forEach((handler, group) => {
      if (opts.trust !== false) toml += `\n[hooks.state.${JSON.stringify(`${hooksPath}:${label}:${group}:0`)}]\ntrusted_hash = "${codexHookHash(label, matcher, handler)}"\n`;
    });
  }
  writeFileSync(hooksPath, JSON.stringify(doc, null, 2));
  appendFileSync(join(h.configDir, 'config.toml'), toml);
}

/** Gemini CLI: mcpServers.probe (trust: true) in user settings, folder trusted, hooks in <ws>/.gemini/settings.json. */
export function configureGemini(h: AgentHome, ws: string, p: Probes): void {
  const userSettings = join(h.configDir, 'settings.json');
  const settings = JSON.parse(readFileSync(userSettings, 'utf8'));
  settings.mcpServers = { ...settings.mcpServers, probe: { command: NODE, args: [p.server], trust: true } };
  writeFileSync(userSettings, JSON.stringify(settings, null, 2));
  trustGeminiFolder(h, ws);
  const entry = (event: string, matcher?: string) => [{ ...(matcher ? { matcher } : {}), hooks: [{ name: `probe-${event}`, type: 'command', command: hookCmd(p, 'gemini', event), timeout: 10_000 }] }];
  mkdirSync(join(ws, '.gemini'), { recursive: true });
  writeFileSync(join(ws, '.gemini', 'settings.json'), JSON.stringify({ hooks: { SessionStart: entry('SessionStart'), BeforeAgent: entry('BeforeAgent'), AfterTool: entry('AfterTool', '*'), AfterAgent: entry('AfterAgent') } }, null, 2));
}

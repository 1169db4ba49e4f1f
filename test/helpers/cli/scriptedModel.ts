// A model endpoint on 127.0.0.1 that a real agent CLI talks to instead of its vendor's API. A test
// scripts each move; every request is logged with the whole conversation the CLI sent — exactly
// what the model would see — so a test can ask when a handoff entered the context, and how.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { conversation, occurrences, offeredTools, type Item, type Wire } from './conversation';
import { answer, type Move } from './wire';
import { waitFor } from '../wait';

/** What the script wants next: run a shell command, call an MCP tool by its short name, or answer text (ends the turn). */
export type Action =
  | { shell: string }
  | { tool: string; args?: Record<string, unknown>; server?: string }
  | { text: string }
  /** A tool by the exact name the CLI offers (built-ins such as Read, or Codex's `ns.tool`). */
  | { call: string; args?: Record<string, unknown> };

export interface ModelRequest {
  /** Position among main requests (side calls are numbered apart). */
  index: number;
  wire: Wire;
  path: string;
  at: number;
  body: any;
  items: Item[];
  /** The conversation as one string: every item's text, one per line. */
  text: string;
  tools: string[];
  /** What the scripted model answered. */
  move?: Move;
}

export interface Turn {
  request: ModelRequest;
  /** Main requests so far, this one last. */
  requests: ModelRequest[];
  /** How many times the script has been asked before (ToolSearch detours do not count). */
  step: number;
  /** Text of the newest tool result in this request, if any. */
  lastToolResult?: string;
}

export type Script = (turn: Turn) => Action | Promise<Action>;

export interface ScriptedModelOptions {
  /** MCP server name the short tool names belong to (default 'handoff'). */
  server?: string;
  /** Main requests after which the model only answers text, so a hook that blocks forever cannot loop a test forever. */
  maxRequests?: number;
  /** Text for side calls (titles, summaries, classifiers). */
  sideText?: string;
}

export interface Insertion {
  request: number;
  item: Item;
}

export interface ScriptedModel {
  url: string;
  port: number;
  requests: ModelRequest[];
  side: ModelRequest[];
  /** Requests to paths this server does not play (method + url). */
  other: string[];
  /** Script mistakes (a tool not offered, the script throwing): a test should assert this is empty. */
  errors: string[];
  setScript(script: Script): void;
  /** Index of the first main request whose conversation contains `needle`, or -1. */
  firstRequestWith(needle: string): number;
  /** Items of request `i` that were not in request `i - 1` (a multiset difference: history repeats). */
  newItems(i: number): Item[];
  /** Every new item that carries `needle`, with the request it first appeared in. */
  insertions(needle: string): Insertion[];
  /**
   * How many requests newly brought `needle` into the context. One surfacing can span two items
   * of one request (Claude Code repeats a Stop reason), so this counts requests, not items.
   */
  surfacings(needle: string): number;
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Waits for the first main request whose conversation contains `needle`; returns its index. */
  waitForText(needle: string, timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

const SHELL_TOOLS: Record<Wire, string[]> = {
  anthropic: ['Bash'],
  openai: ['exec_command', 'shell_command', 'shell'],
  gemini: ['run_shell_command'],
};

function shellCall(wire: Wire, tools: string[], cmd: string): Move | string {
  const name = SHELL_TOOLS[wire].find((t) => tools.includes(t));
  if (!name) return `no shell tool offered (offered: ${tools.join(', ')})`;
  if (name === 'Bash') return { type: 'call', name, args: { command: cmd, description: 'scripted step' } };
  if (name === 'exec_command') return { type: 'call', name, args: { cmd, yield_time_ms: 30_000 } };
  if (name === 'shell') return { type: 'call', name, args: { command: ['bash', '-lc', cmd] } };
  return { type: 'call', name, args: { command: cmd, description: 'scripted step' } };
}

/** The name each CLI gives MCP tool `tool` of server `server`. */
export function mcpToolName(wire: Wire, server: string, tool: string): string {
  return wire === 'anthropic'
    ? `mcp__${server}__${tool}`
    : wire === 'openai'
      ? `mcp__${server}.${tool}`
      : `mcp_${server}_${tool}`;
}

function namedCall(wire: Wire, name: string, args: Record<string, unknown>): Move {
  const dot = wire === 'openai' ? name.lastIndexOf('.') : -1;
  return dot > 0
    ? { type: 'call', namespace: name.slice(0, dot), name: name.slice(dot + 1), args }
    : { type: 'call', name, args };
}

function lastToolResult(items: Item[]): string | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (items[i].kind === 'tool_result') return items[i].text;
  return undefined;
}

function readBody(req: IncomingMessage): Promise<any> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', reject);
    req.on('end', () => {
      let buf = Buffer.concat(chunks);
      const enc = String(req.headers['content-encoding'] ?? '');
      if (enc === 'gzip') buf = zlib.gunzipSync(buf);
      else if (enc === 'br') buf = zlib.brotliDecompressSync(buf);
      else if (enc === 'deflate') buf = zlib.inflateSync(buf);
      else if (enc === 'zstd') buf = (zlib as any).zstdDecompressSync(buf);
      try {
        resolve(buf.length ? JSON.parse(buf.toString('utf8')) : {});
      } catch {
        resolve({ unparsed: buf.toString('utf8') });
      }
    });
  });
}

function classify(
  method: string,
  path: string,
): { wire: Wire; op: 'generate' | 'count' | 'models'; stream: boolean } | null {
  if (method === 'POST' && /\/messages\/count_tokens$/.test(path))
    return { wire: 'anthropic', op: 'count', stream: false };
  if (method === 'POST' && /\/messages$/.test(path)) return { wire: 'anthropic', op: 'generate', stream: true };
  if (method === 'POST' && /\/responses$/.test(path)) return { wire: 'openai', op: 'generate', stream: true };
  if (method === 'GET' && /\/models$/.test(path)) return { wire: 'openai', op: 'models', stream: false };
  const g = /\/models\/[^/:]+:(streamGenerateContent|generateContent|countTokens)$/.exec(path);
  if (method === 'POST' && g)
    return {
      wire: 'gemini',
      op: g[1] === 'countTokens' ? 'count' : 'generate',
      stream: g[1] === 'streamGenerateContent',
    };
  return null;
}

// Gemini CLI asks side questions (next speaker, routing, loop checks) with a JSON schema; one
// object answers them all: the user speaks next, the simple model is fine, no loop.
const GEMINI_SIDE_JSON = JSON.stringify({
  reasoning: 'scripted',
  next_speaker: 'user',
  model_choice: 'flash',
  complexity_reasoning: 'scripted',
  complexity_score: 1,
  unproductive_state_confidence: 0,
  unproductive_state_analysis: 'none',
});

export async function startScriptedModel(script: Script, opts: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const serverName = opts.server ?? 'handoff';
  const maxRequests = opts.maxRequests ?? 40;
  const requests: ModelRequest[] = [];
  const side: ModelRequest[] = [];
  const other: string[] = [];
  const errors: string[] = [];
  let current = script;
  let step = 0;
  let pending: Action | null = null; // the action a ToolSearch detour is loading a tool for

  async function decide(r: ModelRequest): Promise<Move> {
    if (r.index >= maxRequests) return { type: 'text', text: `scripted model: stopping after ${maxRequests} requests` };
    let action = pending;
    pending = null;
    if (!action) {
      try {
        action = await current({ request: r, requests, step: step++, lastToolResult: lastToolResult(r.items) });
      } catch (e) {
        errors.push(`request ${r.index}: script threw ${(e as Error).stack ?? e}`);
        return { type: 'text', text: 'scripted model: script error' };
      }
    }
    const fail = (why: string): Move => {
      errors.push(`request ${r.index}: ${why}`);
      return { type: 'text', text: `scripted model: ${why}` };
    };
    if ('text' in action) return { type: 'text', text: action.text };
    if ('shell' in action) {
      const m = shellCall(r.wire, r.tools, action.shell);
      return typeof m === 'string' ? fail(m) : m;
    }
    const name = 'call' in action ? action.call : mcpToolName(r.wire, action.server ?? serverName, action.tool);
    if (r.tools.includes(name)) return namedCall(r.wire, name, action.args ?? {});
    // Claude Code defers MCP tools behind ToolSearch; one search loads the tool for the next request.
    if (
      r.wire === 'anthropic' &&
      r.tools.includes('ToolSearch') &&
      !('call' in action && action.call === 'ToolSearch')
    ) {
      pending = action;
      return { type: 'call', name: 'ToolSearch', args: { query: `select:${name}` } };
    }
    return fail(`tool ${name} not offered (offered: ${r.tools.join(', ')})`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = classify(req.method ?? 'GET', url.pathname);
    const body = req.method === 'POST' ? await readBody(req) : {};
    if (!route) {
      other.push(`${req.method} ${req.url}`);
      res.writeHead(404, { 'content-type': 'application/json', connection: 'close' });
      return void res.end(
        JSON.stringify({ error: { message: 'not played by the scripted model', type: 'not_found' } }),
      );
    }
    if (route.op === 'models') {
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
      return void res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
    }
    if (route.op === 'count') {
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
      return void res.end(JSON.stringify(route.wire === 'anthropic' ? { input_tokens: 100 } : { totalTokens: 100 }));
    }
    const items = conversation(route.wire, body);
    const tools = offeredTools(route.wire, body);
    const stream = route.wire === 'anthropic' ? body.stream === true : route.stream;
    const isSide = tools.length === 0;
    const log = isSide ? side : requests;
    const r: ModelRequest = {
      index: log.length,
      wire: route.wire,
      path: url.pathname,
      at: Date.now(),
      body,
      items,
      text: items.map((i) => i.text).join('\n'),
      tools,
    };
    log.push(r);
    const jsonWanted =
      route.wire === 'gemini' &&
      (body.generationConfig?.responseJsonSchema ||
        body.generationConfig?.responseSchema ||
        body.generationConfig?.responseMimeType === 'application/json');
    r.move = isSide ? { type: 'text', text: jsonWanted ? GEMINI_SIDE_JSON : (opts.sideText ?? 'OK') } : await decide(r);
    answer(
      route.wire,
      res,
      r.move,
      String(body.model ?? url.pathname.split('/').pop()?.split(':')[0] ?? 'scripted'),
      stream,
    );
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      errors.push(`server: ${(e as Error).stack ?? e}`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  const newItems = (i: number): Item[] => {
    const before = new Map<string, number>();
    for (const it of requests[i - 1]?.items ?? [])
      before.set(JSON.stringify(it), (before.get(JSON.stringify(it)) ?? 0) + 1);
    return requests[i].items.filter((it) => {
      const k = JSON.stringify(it);
      const n = before.get(k) ?? 0;
      if (n > 0) before.set(k, n - 1);
      return n === 0;
    });
  };
  const insertions = (needle: string): Insertion[] =>
    requests.flatMap((_, i) =>
      newItems(i)
        .filter((it) => occurrences(it.text, needle) > 0)
        .map((item) => ({ request: i, item })),
    );

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    side,
    other,
    errors,
    setScript: (s) => void (current = s),
    firstRequestWith: (needle) => requests.findIndex((r) => r.text.includes(needle)),
    newItems,
    insertions,
    surfacings: (needle) => new Set(insertions(needle).map((x) => x.request)).size,
    waitForRequests: (n, timeoutMs = 30_000) => waitFor(() => requests.length >= n, timeoutMs, `${n} model requests`),
    waitForText: (needle, timeoutMs = 30_000) => {
      const first = () => requests.findIndex((r) => r.text.includes(needle));
      return waitFor(() => first() >= 0, timeoutMs, `a model request containing ${JSON.stringify(needle)}`).then(first);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

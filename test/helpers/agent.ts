// A real MCP client (the SDK's Client over StdioClientTransport) spawning the real bridge binary.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DIST, NODE } from './hubProcess';
import { waitFor } from './wait';

export { waitFor };

export interface ChannelPush {
  content: string;
  meta: Record<string, string>;
  at: number;
}

export interface Agent {
  name: string;
  client: Client;
  transport: StdioClientTransport;
  pushes: ChannelPush[];
  resourceUpdates: number;
  stderr: () => string;
  call(tool: string, args?: Record<string, unknown>): Promise<CallToolResult & { structuredContent?: any }>;
  /** Calls a tool and throws if it returned an error. */
  ok(tool: string, args?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
  waitForPushes(n: number, timeoutMs?: number): Promise<void>;
}

export interface AgentSpec {
  socket: string;
  name?: string;
  session?: string;
  roles?: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** false: do not insist the session is live on a hub once connected (there may be none yet). */
  live?: boolean;
  /**
   * The bridge runs under an agent process of its own (a shell), as a CLI's bridge does. Without
   * it the test process is this agent's, so a CLI the test starts runs under it, and the hub
   * refuses that CLI's hooks until its own bridge is live (a CLI started inside another agent).
   */
  ownAgentProcess?: boolean;
}

export async function connectAgent(spec: AgentSpec): Promise<Agent> {
  const args = [join(DIST, 'bridge.js')];
  if (spec.name) args.push('--name', spec.name);
  if (spec.session) args.push('--session', spec.session);
  for (const r of spec.roles ?? []) args.push('--role', r);
  const env = { ...(process.env as Record<string, string>), ...spec.env };
  delete env.HANDOFF_HUB;
  if (spec.socket) env.HANDOFF_HUB = spec.socket; // '' → the bridge derives the hub from its cwd
  const transport = new StdioClientTransport({
    // `; exit` keeps the shell from exec'ing the bridge: the shell stays its parent.
    ...(spec.ownAgentProcess
      ? { command: 'sh', args: ['-c', '"$0" "$@"; exit $?', NODE, ...args] }
      : { command: NODE, args }),
    cwd: spec.cwd,
    env,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: `test-${spec.name ?? 'anon'}`, version: '1.0.0' });
  const agent: Agent = {
    name: spec.name ?? '',
    client,
    transport,
    pushes: [],
    resourceUpdates: 0,
    stderr: () => err,
    call: (tool, a = {}) => client.callTool({ name: tool, arguments: a }) as Promise<any>,
    async ok(tool, a = {}) {
      const r = await agent.call(tool, a);
      if (r.isError) throw new Error(`${tool} failed: ${JSON.stringify(r.content)}`);
      return r.structuredContent;
    },
    close: () => client.close(),
    waitForPushes: (n, timeoutMs = 10_000) =>
      waitFor(() => agent.pushes.length >= n, timeoutMs, `${n} pushes to ${spec.name} (have ${agent.pushes.length})`),
  };
  client.fallbackNotificationHandler = async (n) => {
    if (n.method === 'notifications/claude/channel') {
      const p = n.params as { content: string; meta: Record<string, string> };
      agent.pushes.push({ content: p.content, meta: p.meta, at: Date.now() });
    } else if (n.method === 'notifications/resources/updated') {
      agent.resourceUpdates++;
    }
  };
  await client.connect(transport);
  if (spec.name && spec.live !== false) {
    // A named session is registered before its initialize is answered (G8): live right away.
    const me = (await agent.call('whoami')).structuredContent;
    if (!(me?.live_sessions_of_identity > 0)) {
      await client.close().catch(() => undefined); // a refused agent must not leave its bridge running
      throw new Error(`${spec.name} connected but is not live on the hub: ${JSON.stringify(me)} ${err}`);
    }
  }
  return agent;
}

/** A message body from structuredContent without its untrusted-data fence. */
export function plainBody(m: { body: string }): string {
  return m.body
    .replace(/^<handoff-body-[0-9a-f]+(?: id="[^"]*")?>\n/, '')
    .replace(/\n<\/handoff-body-[0-9a-f]+>$/, '')
    .replace(/&lt;(\/?handoff-body)/gi, '<$1');
}

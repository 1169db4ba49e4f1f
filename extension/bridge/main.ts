// handoff-mcp: the agent's stdio MCP server. The hub serves MCP; the bridge keeps the client's
// session across hubs (bridge.ts) and finds the workspace's hub wherever it listens (discovery).
// It never exits while its client is there, and never tells the client to restart it.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { hubCandidates } from '../shared/discovery';
import { greetFirst } from '../shared/greet';
import { HELLO_VERSION, type AgentHello } from '../protocol/hello';
import { Bridge } from './bridge';

const { values } = parseArgs({
  args: process.argv.slice(2),
  strict: false,
  options: { name: { type: 'string' }, session: { type: 'string' }, role: { type: 'string', multiple: true }, hub: { type: 'string' }, workspace: { type: 'string' } },
});

const env = { ...process.env, ...(values.hub ? { HANDOFF_HUB: String(values.hub) } : {}) };
const pinned = values.workspace as string | undefined;
// One key for the life of this process: every hub it reaches knows it as the same session.
const sessionKey = (values.session as string | undefined) ?? process.env.HANDOFF_SESSION ?? `b-${randomUUID()}`;
const hello: AgentHello = {
  handoff: HELLO_VERSION,
  kind: 'mcp',
  identity: (values.name as string | undefined) ?? process.env.HANDOFF_AGENT,
  session: sessionKey,
  roles: (values.role as string[] | undefined) ?? process.env.HANDOFF_ROLES?.split(',').filter(Boolean),
  pid: process.pid,
  agentPid: process.ppid,
  client: process.env.HANDOFF_CLIENT,
};
const { workspace } = hubCandidates(env, process.cwd(), pinned);
const log = (line: string) => process.stderr.write(`handoff-mcp: ${line}\n`);

const bridge = new Bridge({
  // The places are read anew each time: a hub that starts later, or elsewhere, is found.
  connect: async (resume) => {
    const { sockets } = hubCandidates(env, process.cwd(), pinned);
    try {
      return await greetFirst(sockets, { ...hello, resume }, 5000);
    } catch (e) {
      throw new Error(`tried ${sockets.join(', ')}: ${(e as Error).message}`);
    }
  },
  write: (line) => process.stdout.write(line),
  log,
  noHub: (ever, waitedMs) => {
    const start = `Open the folder in VS Code with the Handoff extension, or run \`npx handoff hub --workspace ${workspace}\`.`;
    return ever
      ? `The Handoff hub for the workspace ${workspace} went away and no hub has answered for ${Math.round(waitedMs / 1000)} s (restarting?). This server reconnects by itself the moment a hub is back — retry in a moment; no restart of this agent is needed. If it stays away: ${start}`
      : `No Handoff hub for the workspace ${workspace} yet (waited ${Math.round(waitedMs / 1000)} s). This server connects by itself the moment one starts — no restart of this agent is needed: ${start} Then call again.`;
  },
  gapMs: Number(process.env.HANDOFF_BRIDGE_GAP_MS) || 6000,
  retryMs: 250,
  sessionKey,
});
process.stdin.on('data', (d: Buffer) => bridge.fromClient(d));
process.stdin.on('end', () => {
  bridge.close();
  process.exit(0);
});
// Stdout gone: the client is gone.
process.stdout.on('error', () => process.exit(0));
bridge.start();
log(`serving ${hello.identity ?? 'an unnamed agent'} for ${workspace}`);

// handoff-mcp: the agent's stdio MCP server. The hub serves MCP; the bridge keeps the client's
// session across hubs (bridge.ts) and finds the workspace's hub wherever it listens (discovery).
// It never exits while its client is there, and never tells the client to restart it.
import { tmuxTerminal } from '../shared/terminal';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { agentNameAt } from '../shared/agentNames';
import { hubCandidates } from '../shared/discovery';
import { canonical } from '../shared/paths';
import { greetFirst, NotAHub } from '../shared/greet';
import type { AgentHello } from '../protocol/hello';
import { HELLO_VERSION } from '../protocol/helloVersion';
import { Bridge } from './bridge';
import { challengeOf, proveProcess } from '../shared/proveProcess';

const { values } = parseArgs({
  args: process.argv.slice(2),
  strict: false,
  options: {
    name: { type: 'string' },
    session: { type: 'string' },
    role: { type: 'string', multiple: true },
    hub: { type: 'string' },
    workspace: { type: 'string' },
    cli: { type: 'string' },
  },
});

const env = { ...process.env, ...(values.hub ? { HANDOFF_HUB: String(values.hub) } : {}) };
const pinned = values.workspace as string | undefined;
// One key for the life of this process: every hub it reaches knows it as the same session.
// Unpinned (connect in git): the checkout the agent runs in names it (shared/agentNames.ts).
const named = typeof values.cli === 'string' ? agentNameAt(values.cli, canonical(process.cwd())) : undefined;
const sessionKey = (values.session as string | undefined) ?? process.env.HANDOFF_SESSION ?? `b-${randomUUID()}`;
const hello: AgentHello = {
  handoff: HELLO_VERSION,
  kind: 'mcp',
  identity: (values.name as string | undefined) ?? process.env.HANDOFF_AGENT ?? named?.name,
  session: sessionKey,
  roles: (values.role as string[] | undefined) ?? process.env.HANDOFF_ROLES?.split(',').filter(Boolean),
  pid: process.pid,
  agentPid: process.ppid,
  client: process.env.HANDOFF_CLIENT,
  terminal: tmuxTerminal(process.env),
  ...(named && {
    checkout: { folder: named.checkout.folder, branch: named.checkout.branch, linked: named.checkout.linked },
  }),
  proves: true,
};
const { workspace } = hubCandidates(env, process.cwd(), pinned);
const log = (line: string) => process.stderr.write(`handoff-mcp: ${line}\n`);

/** A hub that answered and refused the hello: what the model is told, not "no hub". */
let refusal: string | undefined;
const bridge = new Bridge({
  // The places are read anew each time: a hub that starts later, or elsewhere, is found.
  connect: async (resume, registered) => {
    const { sockets } = hubCandidates(env, process.cwd(), pinned);
    try {
      const greeted = await greetFirst(
        sockets,
        { ...hello, ...(registered && { identity: registered.identity, roles: registered.roles }), resume },
        5000,
      );
      refusal = undefined;
      const challenge = challengeOf(greeted.reply);
      if (challenge) proveProcess(greeted.socket, challenge);
      return greeted;
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      // A refusal is not a missing hub; asking again every moment would change nothing.
      if (!err.code && !(e instanceof NotAHub)) {
        refusal = err.message;
        await new Promise((r) => setTimeout(r, 2000));
      }
      throw new Error(`tried ${sockets.join(', ')}: ${err.message}`, { cause: e });
    }
  },
  write: (line) => process.stdout.write(line),
  clientBacklog: () => process.stdout.writableLength,
  log,
  noHub: (ever, waitedMs) => {
    if (refusal) return `The Handoff hub for the workspace ${workspace} refused this server: ${refusal}`;
    // Our own CLI beside this bridge: `npx handoff` would fetch a stranger's package from the registry.
    const start = `Open the folder in VS Code with the Handoff extension, or run \`"${process.execPath}" "${join(__dirname, 'cli.js')}" hub --workspace "${workspace}"\` (Handoff's own CLI, beside this server).`;
    return ever
      ? `The Handoff hub for the workspace ${workspace} went away and no hub has answered for ${Math.round(waitedMs / 1000)} s (restarting?). This server reconnects by itself the moment a hub is back — retry in a moment; no restart of this agent is needed. If it stays away: ${start}`
      : `No Handoff hub for the workspace ${workspace} yet (waited ${Math.round(waitedMs / 1000)} s). This server connects by itself the moment one starts — no restart of this agent is needed: ${start} Then call again.`;
  },
  gapMs: Number(process.env.HANDOFF_BRIDGE_GAP_MS) || 6000,
  retryMs: 250,
});
process.stdin.on('data', (d: Buffer) => bridge.fromClient(d));
// The client is gone: what is on its way to the hub still goes, then this process ends.
const end = () => {
  bridge.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.stdin.on('end', end);
process.stdin.on('error', end);
bridge.start();
process.stdout.on('drain', () => bridge.clientDrained());
// Stdout gone: the client is gone.
process.stdout.on('error', () => process.exit(0));
log(
  `serving ${hello.identity ?? 'an unnamed agent'} for ${workspace}${named ? ` (${named.how} for ${named.checkout.folder}${named.checkout.branch ? `, branch ${named.checkout.branch}` : ''})` : ''}`,
);

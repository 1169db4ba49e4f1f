// handoff-mcp: the agent's stdio MCP server. It only pipes bytes between stdio and the hub
// socket (the hub serves MCP), and exits when either side closes. With no hub it fails loudly —
// on stderr and to the model, through a stand-in server — instead of hanging or pretending.
import { parseArgs } from 'node:util';
import { greet } from '../shared/greet';
import { serveNoHub } from './noHub';
import { HELLO_VERSION, type AgentHello } from '../protocol/hello';
import { resolveHubSocket } from '../shared/paths';

const { values } = parseArgs({
  args: process.argv.slice(2),
  strict: false,
  options: { name: { type: 'string' }, session: { type: 'string' }, role: { type: 'string', multiple: true }, hub: { type: 'string' }, workspace: { type: 'string' } },
});

const env = { ...process.env, ...(values.hub ? { HANDOFF_HUB: String(values.hub) } : {}) };
// --workspace (written by `handoff connect`) pins the hub even when the agent runs elsewhere.
const { socket: socketPath, workspace } = resolveHubSocket(env, process.cwd(), values.workspace as string | undefined);
const hello: AgentHello = {
  handoff: HELLO_VERSION,
  kind: 'mcp',
  identity: (values.name as string | undefined) ?? process.env.HANDOFF_AGENT,
  session: (values.session as string | undefined) ?? process.env.HANDOFF_SESSION,
  roles: (values.role as string[] | undefined) ?? process.env.HANDOFF_ROLES?.split(',').filter(Boolean),
  pid: process.pid,
  agentPid: process.ppid,
  client: process.env.HANDOFF_CLIENT,
};

/** No hub: say so on stderr and to the agent's model, as a stand-in server, instead of hanging or pretending. */
function failLoudly(why: string): void {
  const where = workspace ? `for the workspace ${workspace}` : `at HANDOFF_HUB=${socketPath}`;
  serveNoHub(`No Handoff hub ${where} (${why}). Open the folder in VS Code with the Handoff extension, or run \`npx handoff hub --workspace ${workspace ?? 'DIR'}\`, then restart this MCP server.`);
}

greet(socketPath, hello).then(({ socket, rest }) => {
  if (rest.length) process.stdout.write(rest);
  socket.pipe(process.stdout);
  process.stdin.pipe(socket);
  socket.resume();
  socket.on('close', () => process.exit(0));
  socket.on('error', () => process.exit(1));
  process.stdin.on('end', () => socket.end());
}, (e: NodeJS.ErrnoException) => failLoudly(e.code ? `${e.code} on ${socketPath}` : e.message));

// handoff-mcp: the agent's stdio MCP server. It only pipes bytes between stdio and the hub
// socket (the hub serves MCP), and exits when either side closes. With no hub it fails loudly —
// on stderr and as an MCP error — instead of hanging or pretending.
import { parseArgs } from 'node:util';
import { greet } from '../shared/greet';
import { HELLO_VERSION, type AgentHello } from '../shared/hello';
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

/** No hub: answer every request with an error that says what to do, then exit. */
function failLoudly(why: string): void {
  const where = workspace ? `for the workspace ${workspace}` : `at HANDOFF_HUB=${socketPath}`;
  const message = `No Handoff hub ${where} (${why}). Open the folder in VS Code with the Handoff extension, or run \`npx handoff hub --workspace ${workspace ?? 'DIR'}\`, then reconnect this MCP server.`;
  process.stderr.write(`handoff-mcp: ${message}\n`);
  let buf = '';
  const exitSoon = setTimeout(() => process.exit(1), 5000);
  process.stdin.on('data', (d) => {
    buf += d.toString('utf8');
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let id: unknown;
      try {
        id = (JSON.parse(line) as { id?: unknown }).id;
      } catch {
        continue;
      }
      if (id === undefined) continue;
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message } })}\n`, () => {
        clearTimeout(exitSoon);
        process.exit(1);
      });
    }
  });
  process.stdin.on('end', () => process.exit(1));
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

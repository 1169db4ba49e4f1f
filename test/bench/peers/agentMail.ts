// MCP Agent Mail (PyPI mcp-agent-mail): a FastMCP server that is HTTP only ("No SSE, no STDIO",
// its README), so its agents are MCP SDK clients over Streamable HTTP. Each message is a SQLite
// row plus Markdown files committed to a per-project Git archive. Agents register per project
// (ensure_project, then register_agent with a letters-and-digits name); send_message sends and
// fetch_inbox reads.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDir } from '../../helpers/hubProcess';
import { recordNotifications, resultOf, type Bus, type Mailbox } from './bus';
import { answers, freePort, peerDir, spawnServer, type ServerProcess } from './server';

export const AGENT_MAIL_VERSION = '0.1.0';

export async function startAgentMail(): Promise<Bus> {
  const venv = peerDir(`mcp-agent-mail-${AGENT_MAIL_VERSION}`, 'setup-peers-agent-mail');
  const dir = tempDir('peer-agent-mail');
  const project = join(dir, 'project');
  mkdirSync(project);
  const port = await freePort();
  const env = {
    STORAGE_ROOT: join(dir, 'archive'),
    DATABASE_URL: `sqlite+aiosqlite:///${join(dir, 'storage.sqlite3')}`,
    HTTP_PORT: String(port),
    // Offline: no LLM calls, and litellm's bundled price list instead of fetching one at import.
    LLM_ENABLED: 'false',
    LITELLM_LOCAL_MODEL_COST_MAP: 'True',
    // Its per-call console panels would be measured as send latency.
    LOG_RICH_ENABLED: 'false',
    TOOLS_LOG_ENABLED: 'false',
  };
  const url = `http://127.0.0.1:${port}`;
  // cwd is the empty temp dir: the server reads a .env from its cwd.
  const start = () =>
    spawnServer(join(venv, 'bin', 'python'), ['-m', 'mcp_agent_mail.cli', 'serve-http', '--port', String(port)], {
      cwd: dir,
      env,
      ready: () => answers(`${url}/health/liveness`),
    });
  let server: ServerProcess = await start();

  const connect = async () => {
    const client = new Client({ name: 'bench', version: '1.0.0' });
    const notifications = recordNotifications(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp/`)));
    // Past the SDK's 60 s default: a send waiting on the archive lock gets the server's own answer (it gives up at 60 s).
    const call = async (tool: string, args: Record<string, unknown>) =>
      resultOf(await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 90_000 }), tool);
    return { client, notifications, call };
  };
  const setup = await connect();
  await setup.call('ensure_project', { human_key: project });
  await setup.client.close();

  return {
    name: 'MCP Agent Mail',
    version: AGENT_MAIL_VERSION,
    transport: 'Streamable HTTP (its only one)',
    serverPid: () => server.proc.pid!,
    async open(name): Promise<Mailbox> {
      const { client, notifications, call } = await connect();
      await call('register_agent', { project_key: project, program: 'bench', model: 'none', name });
      return {
        name,
        notifications,
        send: async (to, body) =>
          void (await call('send_message', {
            project_key: project,
            sender_name: name,
            to: [to],
            subject: body.slice(0, 40),
            body_md: body,
          })),
        async read() {
          const r = await call('fetch_inbox', {
            project_key: project,
            agent_name: name,
            include_bodies: true,
            limit: 100_000,
          });
          return (Array.isArray(r) ? r : r.result).map((m: { body_md: string }) => m.body_md);
        },
        close: () => client.close(),
      };
    },
    kill9: () => server.kill9(),
    async restart() {
      server = await start();
    },
    stop: () => server.stop(),
  };
}

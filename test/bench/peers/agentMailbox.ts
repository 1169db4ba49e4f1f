// agent-mailbox (PyPI): a local "workbench" HTTP service keeps the mail in SQLite; each agent
// session runs its stdio MCP server (`agent-mailbox mailbox-mcp --session-file F`), which
// forwards every tool call to the workbench. Registration is what its web UI does, through the
// workbench's API: a project, an employee per agent (manual registration needs an executable
// entry point), project membership, then an exported mailbox session file. project_message
// sends, project_messages reads (at most the newest 100: it has no paging).
// By default it folds a flood: past 10 messages in 5 minutes (or 20 unseen) from one sender to one
// recipient, each further message keeps only its title in a digest and its body is dropped. The
// bench raises those limits with its documented settings, so every message is stored whole, as
// the other buses store them.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempDir } from '../../helpers/hubProcess';
import { recordNotifications, resultOf, type Bus, type Mailbox } from './bus';
import { freePort, peerDir, spawnServer, type ServerProcess } from './server';

export const MAILBOX_VERSION = '0.8.2';
const NO_FOLDING = { AGENT_MAILBOX_BACKLOG_FOLD: '0', AGENT_MAILBOX_FOLD_LIMIT: '1000000', PYTHONUNBUFFERED: '1' };

export async function startAgentMailbox(): Promise<Bus> {
  const venv = peerDir(`agent-mailbox-${MAILBOX_VERSION}`, 'setup-peers-agent-mailbox');
  const dir = tempDir('peer-agent-mailbox');
  const project = join(dir, 'project');
  mkdirSync(project);
  const port = await freePort();
  const python = join(venv, 'bin', 'python');
  // It prints its address with the admin token once it serves: http://127.0.0.1:PORT/#token=T
  const start = () =>
    spawnServer(python, ['-m', 'agent_mailbox', '--home', join(dir, 'home'), '--port', String(port), '--no-browser'], {
      cwd: dir,
      env: NO_FOLDING,
      ready: (out) => /#token=\S+/.test(out),
    });
  let server: ServerProcess = await start();
  const admin = async (path: string, body: unknown) => {
    const token = /#token=(\S+)/.exec(server.output())![1];
    const r = await fetch(`http://127.0.0.1:${port}/api/workbench${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = await r.json();
    if (!r.ok) throw new Error(`agent-mailbox ${path}: ${JSON.stringify(json)}`);
    return json;
  };
  const projectId: string = (await admin('/projects', { name: 'bench', path: project })).id;
  const employees = new Map<string, string>();

  return {
    name: 'agent-mailbox',
    version: MAILBOX_VERSION,
    transport: 'stdio (mailbox-mcp → workbench HTTP)',
    serverPid: () => server.proc.pid!,
    async open(name): Promise<Mailbox> {
      const employee: string = (await admin('/employees', { name, kind: 'claude', entrypoint: '/bin/true' })).id;
      employees.set(name, employee);
      await admin(`/projects/${projectId}/members`, { employee_id: employee });
      const session = (
        await admin('/mailbox/sessions', { employee_id: employee, project_id: projectId, label: `bench-${name}` })
      ).config.mcpServers['agent-mailbox-project'];
      const client = new Client({ name: 'bench', version: '1.0.0' });
      const notifications = recordNotifications(client);
      await client.connect(new StdioClientTransport({ command: session.command, args: session.args, stderr: 'pipe' }));
      const call = async (tool: string, args: Record<string, unknown>) =>
        resultOf(await client.callTool({ name: tool, arguments: args }), tool);
      return {
        name,
        notifications,
        send: async (to, body) =>
          void (await call('project_message', { title: body.slice(0, 40), body, recipient_id: employees.get(to) })),
        read: async () =>
          (await call('project_messages', { folder: 'inbox', limit: 100 })).messages.map(
            (m: { body: string }) => m.body,
          ),
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

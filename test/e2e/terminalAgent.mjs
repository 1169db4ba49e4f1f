// An agent for an integrated terminal: the MCP SDK client over the real bridge, as a CLI would
// run it, ACKing each handoff pushed to it. Plain JS, so a shell in the editor's terminal starts it.
//   node terminalAgent.mjs ROOT LOG NAME WORKSPACE
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [root, log, name, workspace] = process.argv.slice(2);
const require = createRequire(join(root, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const note = (entry) => appendFileSync(log, `${JSON.stringify({ ...entry, at: Date.now() })}\n`);
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [join(root, 'dist', 'bridge.js'), '--name', name, '--workspace', workspace],
  env: process.env,
  stderr: 'inherit',
});
const client = new Client({ name: 'terminal-agent', version: '1' });
client.fallbackNotificationHandler = async (n) => {
  if (n.method !== 'notifications/claude/channel' || !n.params.meta.message_id) return;
  const id = n.params.meta.message_id;
  note({ push: id, replayed: n.params.meta.replayed });
  const r = await client.callTool({ name: 'ack', arguments: { message_id: id } });
  note({ ack: id, ok: !r.isError, text: r.content?.[0]?.text });
};
await client.connect(transport);
note({ ready: process.pid, hub: process.env.HANDOFF_HUB ?? '' });
setInterval(() => undefined, 1 << 30);

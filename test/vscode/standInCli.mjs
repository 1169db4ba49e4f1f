// A stand-in agent CLI for an integrated terminal, shaped like an idle Codex TUI: its MCP client
// (named as Codex's, so the hub knows which CLI it is) runs the real bridge, and each line typed at
// its prompt starts a "turn" that runs the real hook program as Codex would (UserPromptSubmit, then
// Stop). Every line and every turn is recorded, so a test counts exactly what was typed into it.
//   node standInCli.mjs ROOT LOG NAME
import { execFile } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const [root, log, name] = process.argv.slice(2);
const require = createRequire(join(root, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const note = (entry) => appendFileSync(log, `${JSON.stringify({ ...entry, at: Date.now() })}\n`);
// Not in tmux, whatever ran the editor: the wake must come through the editor's terminal.
const env = { ...process.env };
delete env.TMUX;
delete env.TMUX_PANE;

const client = new Client({ name: 'codex-mcp-client', version: '1' });
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'dist', 'bridge.js'), '--name', name],
    env,
    stderr: 'inherit',
  }),
);
// The real hub, not the bridge's one-tool stand-in: send_handoff is listed.
const { tools } = await client.listTools();
note({ ready: process.pid, hub: tools.some((t) => t.name === 'send_handoff') });

/** Runs the real hook for one Codex event; what it printed is what the model would see. */
const hook = (event) =>
  new Promise((resolve) =>
    execFile(
      process.execPath,
      [join(root, 'dist', 'hook.js'), 'codex', event, '--name', name],
      { env, timeout: 10_000 },
      (_e, stdout) => resolve(stdout),
    ).stdin.end(JSON.stringify({ session_id: `stand-in-${process.pid}`, cwd: process.cwd() })),
  );

let turn = 0;
const prompt = () => process.stdout.write('> ');
prompt();
const lines = [];
let running = false;
// One turn at a time, as a TUI takes its prompts.
const next = async () => {
  if (running || lines.length === 0) return;
  running = true;
  const line = lines.shift();
  turn += 1;
  note({ line, turn });
  const shown = await hook('UserPromptSubmit');
  note({ turn, prompt: [...new Set(shown.match(/[0-9A-HJKMNP-TV-Z]{26}/g))] });
  await hook('Stop');
  note({ turn, done: true });
  running = false;
  prompt();
  void next();
};
createInterface({ input: process.stdin }).on('line', (line) => {
  lines.push(line);
  void next();
});

// An agent CLI's side of the bridge's stdio, in a process of its own so a test can stop it
// (SIGSTOP, as ^Z does) and let it go on: it starts the bridge (argv: the bridge's path and
// arguments), does the MCP handshake, and tells its parent on stdout, one JSON line each:
//   {"ready":true}                      the session is initialised
//   {"push":id,"replayed":bool,"chase":bool}  a channel push (its body left out)
//   {"notice":text}                     a push with no message id (a replay's truncation notice)
//   {"response":…}                      the answer to a request the parent wrote to stdin
// The parent's stdin lines are JSON-RPC requests, passed to the bridge as they are.
import { spawn } from 'node:child_process';

const [bridgeJs, ...args] = process.argv.slice(2);
const bridge = spawn(process.execPath, [bridgeJs, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
const tell = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
let text = '';
bridge.stdout.on('data', (d) => {
  text += d.toString();
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
    const line = text.slice(0, nl);
    text = text.slice(nl + 1);
    const m = JSON.parse(line);
    if (m.method === 'notifications/claude/channel') {
      const meta = m.params.meta;
      if (meta.message_id)
        tell({ push: meta.message_id, replayed: meta.replayed === 'true', chase: meta.chase === 'true' });
      else tell({ notice: m.params.content });
    } else if (m.method === 'ping') {
      bridge.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} })}\n`);
    } else if (m.id === 'init') {
      bridge.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      tell({ ready: true, bridgePid: bridge.pid });
    } else if (m.id !== undefined && !m.method) tell({ response: m });
  }
});
let input = '';
process.stdin.on('data', (d) => {
  input += d.toString();
  for (let nl = input.indexOf('\n'); nl >= 0; nl = input.indexOf('\n')) {
    bridge.stdin.write(`${input.slice(0, nl)}\n`);
    input = input.slice(nl + 1);
  }
});
process.stdin.on('end', () => bridge.stdin.end());
bridge.on('exit', (code) => process.exit(code ?? 1));
const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stopped-cli', version: '1' } };
bridge.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: init })}\n`);

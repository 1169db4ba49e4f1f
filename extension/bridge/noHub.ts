// The bridge's answer when it finds no hub: a stand-in MCP server that says why to the agent's
// model, not only on stderr. It completes the handshake and offers one tool, whose every call is
// an error naming the fix — a client that drops failed servers (or shows an empty tool list) would
// otherwise leave the model with no Handoff tools and no reason.
import { LineBuffer } from '../shared/lines';

const TOOL = 'whoami';

interface Request {
  id?: string | number | null;
  method?: string;
  params?: { protocolVersion?: string };
}

function answer(req: Request, message: string): unknown {
  const ok = (result: unknown) => ({ jsonrpc: '2.0', id: req.id, result });
  switch (req.method) {
    case 'initialize':
      return ok({
        protocolVersion: req.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'handoff', version: '0.1.0' },
        instructions: message,
      });
    case 'ping':
      return ok({});
    case 'tools/list':
      return ok({ tools: [{ name: TOOL, description: `Handoff is NOT connected: ${message}`, inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true, openWorldHint: false } }] });
    case 'tools/call':
      return ok({ isError: true, content: [{ type: 'text', text: `error no_hub: ${message}` }], structuredContent: { error: { code: 'no_hub', message } } });
    default:
      return { jsonrpc: '2.0', id: req.id, error: { code: -32000, message } };
  }
}

/** Serves stdio until the agent closes it. */
export function serveNoHub(message: string): void {
  process.stderr.write(`handoff-mcp: ${message}\n`);
  let input = new LineBuffer(1 << 20);
  process.stdin.on('data', (d: Buffer) => {
    const lines = input.lines(d);
    if (input.overLimit) input = new LineBuffer(1 << 20); // a runaway line: drop it, keep serving
    for (const line of lines) {
      let req: Request;
      try {
        req = JSON.parse(line) as Request;
      } catch {
        continue;
      }
      if (req === null || typeof req !== 'object' || req.id === undefined || req.id === null) continue; // notifications
      process.stdout.write(`${JSON.stringify(answer(req, message))}\n`);
    }
  });
  process.stdin.on('end', () => process.exit(1));
}

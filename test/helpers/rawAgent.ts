// A hand-driven MCP connection on the hub socket (hello line + JSON-RPC lines), for what the SDK
// client will not do on purpose: replay a request id, or hold a connection half-open.
import { createConnection, type Socket } from 'node:net';
import { waitFor } from './agent';

export interface RawAgent {
  socket: Socket;
  messages: any[];
  request(id: number, method: string, params?: unknown): void;
  notify(method: string, params?: unknown): void;
  response(id: number, nth?: number): Promise<any>;
  initialize(): Promise<void>;
  close(): void;
}

export async function rawAgent(
  socketPath: string,
  hello: Record<string, unknown>,
  opts: { answerPings?: boolean } = {},
): Promise<RawAgent> {
  const socket = createConnection(socketPath);
  await new Promise<void>((res, rej) => socket.once('connect', res).once('error', rej));
  socket.write(`${JSON.stringify({ handoff: 1, kind: 'mcp', ...hello })}\n`);
  const messages: any[] = [];
  let buf = '';
  let helloSeen = false;
  socket.on('data', (d) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!helloSeen) {
        helloSeen = true;
        continue;
      }
      const msg = JSON.parse(line);
      messages.push(msg);
      if (msg.method === 'ping' && opts.answerPings !== false)
        socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: {} })}\n`);
    }
  });
  const agent: RawAgent = {
    socket,
    messages,
    request: (id, method, params) => socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`),
    notify: (method, params) => socket.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`),
    async response(id, nth = 1) {
      await waitFor(
        () => messages.filter((m) => m.id === id && !m.method).length >= nth,
        10_000,
        `response ${id} #${nth}`,
      );
      return messages.filter((m) => m.id === id && !m.method)[nth - 1];
    },
    async initialize() {
      agent.request(0, 'initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      });
      await agent.response(0);
      agent.notify('notifications/initialized');
    },
    close: () => socket.destroy(),
  };
  return agent;
}

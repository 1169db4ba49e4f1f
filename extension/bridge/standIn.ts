// What the bridge answers itself, because the client's MCP session is the bridge's and outlives
// every hub: `initialize` (with exactly what a hub would say), `ping`, the lists (tools, resources,
// prompts) while no hub is there, and the error a call gets when no hub answered in time.
import {
  CATALOG,
  CATALOG_METHODS,
  INSTRUCTIONS,
  PROTOCOL_VERSIONS,
  SERVER_CAPABILITIES,
  SERVER_INFO,
} from '../protocol/mcp';
import type { Id, Message } from './wire';

export function initializeResult(requested: unknown): object {
  const version = PROTOCOL_VERSIONS.find((v) => v === requested) ?? PROTOCOL_VERSIONS[0];
  return {
    protocolVersion: version,
    capabilities: SERVER_CAPABILITIES,
    serverInfo: SERVER_INFO,
    instructions: INSTRUCTIONS,
  };
}

/** A hub's answer to a list request, or undefined for a method that needs the hub. */
export function catalogAnswer(request: Message): Message | undefined {
  const method = CATALOG_METHODS.find((m) => m === request.method);
  return method && { jsonrpc: '2.0', id: request.id as Id, ...CATALOG[method] };
}

/** A tool call gets a tool error the model reads; any other request a JSON-RPC error. */
export function unavailable(request: Message, message: string): Message {
  if (request.method === 'tools/call') {
    return {
      jsonrpc: '2.0',
      id: request.id as Id,
      result: {
        isError: true,
        content: [{ type: 'text', text: `error no_hub: ${message}` }],
        structuredContent: { error: { code: 'no_hub', message, retryable: true } },
      },
    };
  }
  return { jsonrpc: '2.0', id: request.id as Id, error: { code: -32000, message } };
}

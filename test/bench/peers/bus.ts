// What `npm run bench:peers` needs of a message bus, so each system is measured the same way:
// agents are MCP SDK clients of the bus's own MCP server, one session each.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export interface Mailbox {
  name: string;
  /** Sends one message; resolves when the bus has acknowledged it (the tool call returned). */
  send(to: string, body: string): Promise<void>;
  /** Every message body this agent can read in its inbox now. */
  read(): Promise<string[]>;
  /** Server-to-client notifications this session received (a push would be one). */
  notifications: { method: string; at: number }[];
  close(): Promise<void>;
}

export interface Bus {
  name: string;
  version: string;
  /** How its MCP server is reached: its only transport, or the one its README gives agents. */
  transport: string;
  /** The process that stores the mail: what kill -9 hits and strace counts. */
  serverPid(): number;
  /** Registers the agent on the bus if it needs that, then opens its MCP session. */
  open(name: string): Promise<Mailbox>;
  kill9(): Promise<void>;
  /** Starts the server again on the same store, after kill9. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Records every notification a client gets, so "does it push?" is answered by what arrived. */
export function recordNotifications(client: Client): Mailbox['notifications'] {
  const seen: Mailbox['notifications'] = [];
  const before = client.fallbackNotificationHandler;
  client.fallbackNotificationHandler = async (n) => {
    seen.push({ method: n.method, at: performance.now() });
    await before?.(n);
  };
  return seen;
}

/** A tool call's JSON result: structuredContent when given, else the first text block parsed. */
export function resultOf(r: any, tool: string): any {
  if (r.isError) throw new Error(`${tool} failed: ${JSON.stringify(r.content).slice(0, 500)}`);
  if (r.structuredContent !== undefined) return r.structuredContent;
  return JSON.parse(r.content?.[0]?.text ?? 'null');
}

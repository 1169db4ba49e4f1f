// JSON-RPC as the bridge sees it: just enough shape to route a line, never the tools' contents.
export type Id = string | number;

export interface Message {
  jsonrpc: '2.0';
  id?: Id | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
}

export function isRequest(m: Message): boolean {
  return typeof m.method === 'string' && m.id !== undefined && m.id !== null;
}

export function isNotification(m: Message): boolean {
  return typeof m.method === 'string' && (m.id === undefined || m.id === null);
}

export function isResponse(m: Message): boolean {
  return m.method === undefined && m.id !== undefined && m.id !== null && ('result' in m || 'error' in m);
}

/** A line as a message, or undefined for anything that is not one JSON-RPC object. */
export function parse(line: string): Message | undefined {
  try {
    const m = JSON.parse(line) as Message;
    return m !== null && typeof m === 'object' && !Array.isArray(m) ? m : undefined;
  } catch {
    return undefined;
  }
}

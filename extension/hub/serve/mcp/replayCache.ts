// G6 on the wire, within one connection: a call that changes the bus, resent on the same
// connection with the same JSON-RPC id and arguments, is answered with its first result instead
// of running again; a resend while the first still runs waits for it. Only within one connection,
// because a client that reconnects starts its ids again, and never for reads, which always run:
// across connections a retried send is made safe by its idempotency key, a receipt by being one.
import { createHash } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CHANGING_TOOLS } from '../../../protocol/mcp';

const MAX_ENTRIES = 256;
/** A larger answer is not kept: the calls that change the bus answer in a few hundred bytes. */
const MAX_RESPONSE_BYTES = 16 * 1024;
/** What one connection's cache may hold in all. */
const MAX_BYTES = 1024 * 1024;

interface Entry {
  response?: JSONRPCMessage;
  bytes: number;
  waiters: ((response: JSONRPCMessage) => void)[];
}

type Id = string | number;

interface ToolCall {
  id: Id;
  method: 'tools/call';
  params?: { name?: unknown };
}

function changingCall(m: JSONRPCMessage): ToolCall | undefined {
  if (!('method' in m) || !('id' in m) || m.method !== 'tools/call') return undefined;
  const call = m as ToolCall;
  return typeof call.params?.name === 'string' && CHANGING_TOOLS.has(call.params.name) ? call : undefined;
}

function responseId(m: JSONRPCMessage): Id | undefined {
  return 'id' in m && ('result' in m || 'error' in m) ? (m as { id: Id }).id : undefined;
}

export class ReplayCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  get size(): number {
    return this.entries.size;
  }

  /** Bytes of responses held (bounded by MAX_BYTES). */
  get heldBytes(): number {
    return this.bytes;
  }

  private keep(fingerprint: string, response: JSONRPCMessage): void {
    const entry = this.entries.get(fingerprint);
    if (!entry) return;
    for (const w of entry.waiters.splice(0)) w(response);
    const bytes = JSON.stringify(response).length;
    if (bytes > MAX_RESPONSE_BYTES) {
      this.entries.delete(fingerprint);
      return;
    }
    entry.response = response;
    entry.bytes = bytes;
    this.bytes += bytes;
    this.trim();
  }

  /** Oldest first, past the entry or byte bound; an entry still waiting for its first answer stays. */
  private trim(): void {
    for (const [k, e] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES && this.bytes <= MAX_BYTES) return;
      if (!e.response) continue;
      this.entries.delete(k);
      this.bytes -= e.bytes;
    }
  }

  /** Wraps one connection's transport; a cache serves that connection only. */
  wrap(inner: Transport): Transport {
    const open = new Map<Id, string>(); // request id → fingerprint
    const outer: Transport = {
      start: () => inner.start(),
      close: () => inner.close(),
      send: async (message, options) => {
        const id = responseId(message);
        const fingerprint = id === undefined ? undefined : open.get(id);
        if (fingerprint) {
          open.delete(id!);
          this.keep(fingerprint, message);
        }
        return inner.send(message, options);
      },
    };
    inner.onmessage = (message, extra) => {
      const call = changingCall(message);
      if (call) {
        // A digest, not the params: a key must not hold a megabyte of arguments.
        const fingerprint = createHash('sha256')
          .update(`${JSON.stringify(call.id)}\n${JSON.stringify(call.params ?? null)}`)
          .digest('base64');
        const entry = this.entries.get(fingerprint);
        if (entry?.response) {
          void inner.send(entry.response).catch(() => undefined);
          return;
        }
        if (entry) {
          entry.waiters.push((r) => void inner.send(r).catch(() => undefined));
          return;
        }
        this.entries.set(fingerprint, { waiters: [], bytes: 0 });
        this.trim();
        open.set(call.id, fingerprint);
      }
      outer.onmessage?.(message, extra);
    };
    inner.onclose = () => outer.onclose?.();
    inner.onerror = (e) => outer.onerror?.(e);
    return outer;
  }
}

// G6 on the wire: a tools/call request replayed on the transport (same session key, same
// JSON-RPC id, same params — a client resending after a reconnect) is answered from the first
// result instead of running again. A replay that arrives while the first is still running waits
// for it, even if the first arrived on a connection that has since died.
import { createHash } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const MAX_ENTRIES = 256;
/** A response larger than this is not kept: only sends need exactly-once answers, and theirs are small. */
const MAX_RESPONSE_BYTES = 16 * 1024;
/** What one session's cache may hold in all. */
const MAX_BYTES = 1024 * 1024;

interface Entry {
  response?: JSONRPCMessage;
  bytes: number;
  waiters: ((response: JSONRPCMessage) => void)[];
}

type Id = string | number;

function requestOf(m: JSONRPCMessage): { id: Id; method: string; params?: unknown } | undefined {
  return 'method' in m && 'id' in m ? (m as { id: Id; method: string; params?: unknown }) : undefined;
}

function responseId(m: JSONRPCMessage): Id | undefined {
  return 'id' in m && ('result' in m || 'error' in m) ? (m as { id: Id }).id : undefined;
}

export class ReplayCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Connections using this cache now: a closed session's cache is kept only for its reconnect. */
  connections = 0;

  get size(): number {
    return this.entries.size;
  }

  /** Bytes of responses held (bounded by MAX_BYTES). */
  get heldBytes(): number {
    return this.bytes;
  }

  private remember(fingerprint: string, response: JSONRPCMessage): void {
    const entry = this.entries.get(fingerprint);
    if (!entry) return;
    for (const w of entry.waiters.splice(0)) w(response);
    const bytes = JSON.stringify(response).length;
    if (bytes > MAX_RESPONSE_BYTES) {
      this.entries.delete(fingerprint); // a replay of a big read simply runs again
      return;
    }
    entry.response = response;
    entry.bytes = bytes;
    this.bytes += bytes;
    this.trim();
  }

  private admit(fingerprint: string): void {
    this.entries.set(fingerprint, { waiters: [], bytes: 0 });
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

  wrap(inner: Transport): Transport {
    const open = new Map<Id, string>(); // request id → fingerprint, for this connection
    const outer: Transport = {
      start: () => inner.start(),
      close: () => inner.close(),
      send: async (message, options) => {
        const id = responseId(message);
        const fingerprint = id === undefined ? undefined : open.get(id);
        if (fingerprint) {
          open.delete(id!);
          this.remember(fingerprint, message); // before sending: the connection may be gone
        }
        return inner.send(message, options);
      },
    };
    inner.onmessage = (message, extra) => {
      const req = requestOf(message);
      if (req?.method === 'tools/call') {
        // A digest, not the params: a key must not hold a megabyte of arguments.
        const fingerprint = createHash('sha256').update(`${JSON.stringify(req.id)}\n${JSON.stringify(req.params ?? null)}`).digest('base64');
        const entry = this.entries.get(fingerprint);
        if (entry?.response) {
          void inner.send(entry.response).catch(() => undefined);
          return;
        }
        if (entry) {
          entry.waiters.push((r) => void inner.send(r).catch(() => undefined));
          return;
        }
        this.admit(fingerprint);
        open.set(req.id, fingerprint);
      }
      outer.onmessage?.(message, extra);
    };
    this.connections++;
    inner.onclose = () => {
      this.connections--;
      outer.onclose?.();
    };
    inner.onerror = (e) => outer.onerror?.(e);
    return outer;
  }
}

// MCP over the hub socket: newline-delimited JSON-RPC, exactly what the bridge pipes from stdio.
import type { Socket } from 'node:net';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_LINE_BYTES } from '../../../protocol/mcp';

/**
 * What one connection may have written and not yet taken, in bytes: past it the agent has stopped
 * reading (a CLI suspended with ^Z, blocked) and the connection is closed, its session to be
 * replayed when it comes back (Redis's client-output-buffer-limit). 3 000 pushes of 64 KiB to a
 * socket that was not read took the hub from 76 to 946 MiB, and it never let go (#44).
 */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

/** The deepest nesting a message may have: our tools' arguments are two levels deep. */
export const MAX_DEPTH = 32;

/** Iterative, so a hostile depth cannot overflow the stack that measures it. */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d >= max) return true;
    for (const child of Object.values(v as object)) stack.push([child, d + 1]);
  }
  return false;
}

export class SocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /**
   * Closed with bytes written and not taken (past MAX_QUEUED_BYTES, or a heartbeat unanswered):
   * they are lost with the socket. Before `onclose`, once.
   */
  onunread?: (queuedBytes: number, pastBound: boolean) => void;
  private readonly buffer = new ReadBuffer();
  private closed = false;
  /** Chunks that arrived before `ready`: the hub registers the session before it reads `initialize`. */
  private held: Buffer[] | undefined = [];

  /** `leftover`: bytes that arrived in the same chunk as the hello line. */
  constructor(
    private readonly socket: Socket,
    private readonly leftover?: Buffer,
    ready: Promise<unknown> = Promise.resolve(),
    private readonly maxQueuedBytes = MAX_QUEUED_BYTES,
  ) {
    void ready
      .catch(() => undefined)
      .then(() => {
        const held = this.held ?? [];
        this.held = undefined;
        for (const chunk of held) this.receive(chunk);
      });
  }

  start(): Promise<void> {
    this.socket.on('data', (chunk: Buffer) => this.take(chunk));
    this.socket.on('error', (e) => this.onerror?.(e));
    this.socket.on('close', () => {
      this.unread();
      this.finish();
    });
    if (this.leftover?.length) this.take(this.leftover);
    return Promise.resolve();
  }

  private take(chunk: Buffer): void {
    if (this.held) this.held.push(chunk);
    else this.receive(chunk);
  }

  /** Bytes received since the last newline: a line without end is cut off before it eats memory. */
  private unterminated = 0;

  /** An input this connection will not take: say why, then close only this connection. */
  private refuse(why: string, id: unknown = null): void {
    this.onerror?.(new Error(why));
    if (!this.socket.destroyed)
      this.socket.end(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: why } })}\n`);
    this.socket.destroy();
    this.finish();
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    let start = 0;
    let run = this.unterminated;
    for (let nl = chunk.indexOf(0x0a); ; nl = chunk.indexOf(0x0a, start)) {
      run += (nl < 0 ? chunk.length : nl) - start;
      if (run > MAX_LINE_BYTES)
        return this.refuse(
          `A line over ${MAX_LINE_BYTES} bytes: this connection is closed (a handoff body is at most 64 KiB).`,
        );
      if (nl < 0) break;
      run = 0;
      start = nl + 1;
    }
    this.unterminated = run;
    this.buffer.append(chunk);
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (e) {
        this.onerror?.(e as Error); // one bad line is reported, not fatal
        continue;
      }
      if (!message) return;
      if (deeperThan(message, MAX_DEPTH)) {
        return this.refuse(
          `A message nested deeper than ${MAX_DEPTH} levels: this connection is closed.`,
          'id' in message ? message.id : null,
        );
      }
      this.onmessage?.(message);
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || this.socket.destroyed) throw new Error('the agent connection is closed');
    if (this.socket.writableLength > this.maxQueuedBytes) {
      // What is queued is dropped with the socket: the session's replay on its return brings it.
      this.unread(true);
      this.socket.destroy();
      this.finish();
      throw new Error('the agent stopped reading: its connection is closed');
    }
    await new Promise<void>((resolve, reject) =>
      this.socket.write(serializeMessage(message), (e) => (e ? reject(e) : resolve())),
    );
  }

  get isOpen(): boolean {
    return !this.closed && !this.socket.destroyed;
  }

  private unread(pastBound = false): void {
    const queued = this.socket.writableLength;
    if (queued > 0 && !this.closed && this.onunread) {
      const told = this.onunread;
      this.onunread = undefined;
      told(queued, pastBound);
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }

  close(): Promise<void> {
    this.unread();
    this.socket.end();
    this.socket.destroy();
    this.finish();
    return Promise.resolve();
  }
}

// MCP over the hub socket: newline-delimited JSON-RPC, exactly what the bridge pipes from stdio.
import type { Socket } from 'node:net';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export class SocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  private closed = false;
  /** Chunks that arrived before `ready`: the hub registers the session before it reads `initialize`. */
  private held: Buffer[] | undefined = [];

  /** `leftover`: bytes that arrived in the same chunk as the hello line. */
  constructor(private readonly socket: Socket, private readonly leftover?: Buffer, ready: Promise<unknown> = Promise.resolve()) {
    void ready.catch(() => undefined).then(() => {
      const held = this.held ?? [];
      this.held = undefined;
      for (const chunk of held) this.receive(chunk);
    });
  }

  async start(): Promise<void> {
    this.socket.on('data', (chunk: Buffer) => this.take(chunk));
    this.socket.on('error', (e) => this.onerror?.(e));
    this.socket.on('close', () => this.finish());
    if (this.leftover?.length) this.take(this.leftover);
  }

  private take(chunk: Buffer): void {
    if (this.held) this.held.push(chunk);
    else this.receive(chunk);
  }

  private receive(chunk: Buffer): void {
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
      this.onmessage?.(message);
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || this.socket.destroyed) throw new Error('the agent connection is closed');
    await new Promise<void>((resolve, reject) => this.socket.write(serializeMessage(message), (e) => (e ? reject(e) : resolve())));
  }

  get isOpen(): boolean {
    return !this.closed && !this.socket.destroyed;
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }

  async close(): Promise<void> {
    this.socket.end();
    this.socket.destroy();
    this.finish();
  }
}

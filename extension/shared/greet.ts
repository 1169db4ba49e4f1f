// The client side of the hello exchange: connect, write our hello line, read the hub's reply line.
// Bytes after the reply (the start of the protocol proper) are handed back, not lost.
import { createConnection, type Socket } from 'node:net';
import { MAX_HELLO_BYTES, type Hello, type HelloReply } from '../protocol/hello';
import { LineBuffer } from './lines';

export interface Greeted {
  socket: Socket;
  reply: HelloReply;
  /** Anything the hub sent after its reply line, in the same chunk. */
  rest: Buffer;
}

export class NotAHub extends Error {}

/** Rejects with the socket error (ENOENT, ECONNREFUSED…), NotAHub, or the hub's refusal. */
export function greet(path: string, hello: Hello, timeoutMs = 10_000): Promise<Greeted> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    const fail = (e: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(e);
    };
    const timer = setTimeout(() => fail(new NotAHub(`nothing answered on ${path} within ${timeoutMs} ms`)), timeoutMs);
    socket.once('error', fail);
    socket.on('connect', () => socket.write(`${JSON.stringify(hello)}\n`));
    const head = new LineBuffer(MAX_HELLO_BYTES);
    const onHead = (chunk: Buffer) => {
      const first = head.firstLine(chunk);
      if (!first) {
        if (head.overLimit) fail(new NotAHub(`${path} is not a Handoff hub`));
        return;
      }
      socket.off('data', onHead);
      socket.pause();
      let reply: HelloReply;
      try {
        reply = JSON.parse(first.line) as HelloReply;
      } catch {
        return fail(new NotAHub(`${path} is not a Handoff hub`));
      }
      if (!reply.ok) return fail(new Error(reply.error ?? 'the hub refused the connection'));
      clearTimeout(timer);
      socket.off('error', fail);
      resolve({ socket, reply, rest: first.rest });
    };
    socket.on('data', onHead);
  });
}

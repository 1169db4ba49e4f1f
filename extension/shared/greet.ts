// The client side of the hello exchange: connect, write our hello line, read the hub's reply line.
// Bytes after the reply (the start of the protocol proper) are handed back, not lost.
import { createConnection, type Socket } from 'node:net';
import type { Hello, HelloReply } from '../protocol/hello';

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
    let head = Buffer.alloc(0);
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const nl = head.indexOf(0x0a);
      if (nl < 0) return;
      socket.off('data', onHead);
      socket.pause();
      let reply: HelloReply;
      try {
        reply = JSON.parse(head.subarray(0, nl).toString('utf8')) as HelloReply;
      } catch {
        return fail(new NotAHub(`${path} is not a Handoff hub`));
      }
      if (!reply.ok) return fail(new Error(reply.error ?? 'the hub refused the connection'));
      clearTimeout(timer);
      socket.off('error', fail);
      resolve({ socket, reply, rest: head.subarray(nl + 1) });
    };
    socket.on('data', onHead);
  });
}

// The client side of the hello exchange: connect, write our hello line, read the hub's reply line.
// Bytes after the reply (the start of the protocol proper) are handed back, not lost.
import { createConnection, type Socket } from 'node:net';
import { MAX_HELLO_BYTES, type Hello, type HelloReply } from '../protocol/hello';
import { signHello, secretFile } from './hubSecret';
import { LineBuffer } from './lines';

export interface Greeted {
  socket: Socket;
  reply: HelloReply;
  /** Anything the hub sent after its reply line, in the same chunk. */
  rest: Buffer;
}

export class NotAHub extends Error {}

/** Something answers as a hub there without proving it is this user's (another user's pipe). */
export class NotYourHub extends Error {}

/**
 * No secret to prove where one is needed (hubSecret.ts signHello): no hub of this user there, so
 * nothing is said to whatever holds the pipe. Like a missing socket (a code): the next place is
 * tried, and a bridge waits for a hub as for none.
 */
export class NoHubSecret extends Error {
  readonly code = 'ENOSECRET';
}

/** Rejects with the socket error (ENOENT, ECONNREFUSED…), NotAHub, or the hub's refusal. */
export function greet(path: string, hello: Hello, timeoutMs = 10_000): Promise<Greeted> {
  return new Promise((resolve, reject) => {
    const signed = signHello(path);
    if (!signed)
      return reject(
        new NoHubSecret(
          `no hub of this user's at ${path}: its secret (${secretFile(path)}) is not there, which a hub writes when it starts; nothing was said to whatever holds ${path}`,
        ),
      );
    const socket = createConnection(path);
    const fail = (e: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(e);
    };
    const timer = setTimeout(() => fail(new NotAHub(`nothing answered on ${path} within ${timeoutMs} ms`)), timeoutMs);
    socket.once('error', fail);
    socket.on('connect', () => socket.write(`${JSON.stringify({ ...hello, ...signed.fields })}\n`));
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
      if (!signed.hubKnows(reply))
        return fail(
          new NotYourHub(
            `${path} is held by a process that does not know this user's hub secret (${secretFile(path)}): not your hub, nothing was sent to it`,
          ),
        );
      clearTimeout(timer);
      socket.off('error', fail);
      resolve({ socket, reply, rest: first.rest });
    };
    socket.on('data', onHead);
  });
}

/**
 * Greets the first of `sockets` where a hub answers, in order. A hub that refuses the hello is
 * the answer (trying elsewhere would hide why). With no hub at any of them it rejects with what
 * says most: something there that is not a hub, else the last socket error.
 */
export async function greetFirst(
  sockets: readonly string[],
  hello: Hello,
  timeoutMs?: number,
): Promise<Greeted & { path: string }> {
  let why: Error = new Error('no socket to try');
  for (const path of sockets) {
    try {
      return { ...(await greet(path, hello, timeoutMs)), path };
    } catch (e) {
      if (!(e instanceof NotAHub) && !(e as NodeJS.ErrnoException).code) throw e;
      if (!(why instanceof NotAHub)) why = e as Error;
    }
  }
  throw why;
}

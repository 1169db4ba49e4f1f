// A control-protocol client over the hub socket (used by the CLI and tests; the extension talks
// to its own hub over the languageclient connection instead).
import { createConnection, type Socket } from 'node:net';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { HELLO_VERSION, type HelloReply } from './hello';

export interface ControlClient {
  connection: MessageConnection;
  hub: HelloReply;
  close(): void;
}

export function connectControl(socketPath: string, client = 'cli'): Promise<ControlClient> {
  return new Promise((resolve, reject) => {
    const socket: Socket = createConnection(socketPath);
    socket.once('error', reject);
    socket.on('connect', () => socket.write(`${JSON.stringify({ handoff: HELLO_VERSION, kind: 'control', client })}\n`));
    let head = Buffer.alloc(0);
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const nl = head.indexOf(0x0a);
      if (nl < 0) return;
      socket.off('data', onHead);
      socket.off('error', reject);
      socket.pause();
      let reply: HelloReply;
      try {
        reply = JSON.parse(head.subarray(0, nl).toString('utf8')) as HelloReply;
      } catch {
        socket.destroy();
        reject(new Error(`${socketPath} is not a Handoff hub`));
        return;
      }
      if (!reply.ok) {
        socket.destroy();
        reject(new Error(reply.error ?? 'the hub refused the connection'));
        return;
      }
      const rest = head.subarray(nl + 1);
      if (rest.length) socket.unshift(rest);
      const connection = createMessageConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
      connection.listen();
      socket.resume();
      resolve({ connection, hub: reply, close: () => { connection.dispose(); socket.destroy(); } });
    };
    socket.on('data', onHead);
  });
}

// A control-protocol client over the hub socket (used by the CLI and tests; the extension talks
// to its own hub over the languageclient connection instead).
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { greetFirst } from './greet';
import type { HelloReply } from '../protocol/hello';
import { HELLO_VERSION } from '../protocol/helloVersion';

export interface ControlClient {
  connection: MessageConnection;
  hub: HelloReply;
  close(): void;
}

/**
 * Connects to the first of `sockets` where a hub answers (one path, or the places discovery lists).
 * With the hub's `editorKey` it is served as an editor window (`hub.channel` says which it got).
 */
export async function connectControl(
  sockets: string | readonly string[],
  client = 'cli',
  editorKey?: string,
): Promise<ControlClient> {
  const { socket, reply, rest } = await greetFirst(typeof sockets === 'string' ? [sockets] : sockets, {
    handoff: HELLO_VERSION,
    kind: 'control',
    client,
    ...(editorKey ? { editorKey } : {}),
  });
  if (rest.length) socket.unshift(rest);
  const connection = createMessageConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
  connection.listen();
  socket.resume();
  return {
    connection,
    hub: reply,
    close: () => {
      connection.dispose();
      socket.destroy();
    },
  };
}

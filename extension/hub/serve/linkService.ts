// A linked repository's hub on this hub's socket (hub/link/): after the hello (answered by
// LocalLinks.answer, with this hub's signature over its nonce) it must prove its node key before
// anything else is served; then it delivers its outbox entries here and reads this hub's
// identities. It speaks only for its own repository's names (bus/links.ts).
import type { Socket } from 'node:net';
import { createMessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { z } from 'zod';
import type { Hub } from '../hub';
import { MAX_DELIVERY } from '../link/localLinks';
import { LINK_DELIVER, LINK_PEERS, LINK_PROVE, LINK_ROSTER_CHANGED, type LinkHello } from '../../protocol/link';
import type { Log } from '../../protocol/hubLog';

const proveParams = z.object({ sig: z.string().max(200) }).strict();
const deliverParams = z.object({ items: z.array(z.unknown()).max(MAX_DELIVERY) }).strict();
const REFUSED = -32001;

export function serveLink(hub: Hub, socket: Socket, hello: LinkHello, nonce: string, rest: Buffer, log: Log): void {
  const links = hub.links;
  const peer = hello.link;
  if (rest.length) socket.unshift(rest);
  const connection = createMessageConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
  let proven = false;
  const close = () => {
    connection.dispose();
    socket.destroy();
  };
  const mustBeProven = () => {
    if (!proven || !links.stillLinked(peer.root, peer.key)) {
      close();
      throw new ResponseError(REFUSED, `${peer.root} is not (or no longer) linked here, or has not proven its key`);
    }
  };
  connection.onRequest(LINK_PROVE, async (raw) => {
    const p = proveParams.safeParse(raw);
    if (!p.success || !(await links.proven(peer, nonce, p.data.sig, close))) {
      log(`a hub claiming to be ${peer.root} (${peer.repo}) did not prove its key: closed`, 'warn');
      setImmediate(close);
      throw new ResponseError(REFUSED, 'not signed by the key you named');
    }
    proven = true;
    log(`linked repository ${peer.repo} (${peer.root}) connected`);
    return {};
  });
  connection.onRequest(LINK_DELIVER, (raw) => {
    mustBeProven();
    const p = deliverParams.safeParse(raw);
    if (!p.success) throw new ResponseError(REFUSED, `link/deliver: ${p.error.issues[0]?.message ?? 'bad params'}`);
    return links.ingest(peer.repo, peer.key, p.data.items);
  });
  connection.onRequest(LINK_PEERS, () => {
    mustBeProven();
    return links.localPeers();
  });
  // Its list_peers follows this hub's identities and sessions: told when they change.
  let said = '';
  let timer: NodeJS.Timeout | undefined;
  const stop = hub.onChanged(() => {
    if (!proven || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      const now = JSON.stringify(links.localPeers());
      if (now === said) return;
      said = now;
      void connection.sendNotification(LINK_ROSTER_CHANGED).catch(() => undefined);
    }, 50);
  });
  connection.onClose(() => {
    stop();
    clearTimeout(timer);
    links.closed(peer.root, close);
  });
  connection.listen();
  socket.on('close', () => connection.dispose());
  socket.resume();
}

// A gate on a homeserver's federation port: the address other servers reach it by is this TCP
// relay to its real listener, so a test can cut the link between two homeservers (connections
// dropped, new ones refused, as when a server becomes unreachable) and restore it, with no root
// and no firewall. Client traffic (the hubs) never passes through it.
import { connect, createServer } from 'node:net';

/**
 * @param {number} port the federation address's port (the server's name is 127.0.0.1:port)
 * @param {number} target the port Synapse's federation listener is bound to
 */
export async function linkGate(port, target) {
  const sockets = new Set();
  let server = null;

  const open = () =>
    new Promise((resolve, reject) => {
      server = createServer((inbound) => {
        const outbound = connect(target, '127.0.0.1');
        for (const s of [inbound, outbound]) {
          s.unref();
          sockets.add(s);
          s.on('error', () => s.destroy());
          s.on('close', () => {
            sockets.delete(s);
            inbound.destroy();
            outbound.destroy();
          });
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      server.once('error', reject);
      // The gate never keeps a test process alive; it goes with it.
      server.unref();
      server.listen(port, '127.0.0.1', () => resolve());
    });

  async function cut() {
    if (!server) return;
    const closing = new Promise((resolve) => server.close(() => resolve()));
    server = null;
    for (const s of sockets) s.destroy();
    sockets.clear();
    await closing;
  }

  await open();
  return {
    /** Drops every open federation connection and refuses new ones. */
    cut,
    /** Accepts federation connections again, on the same address. */
    async restore() {
      if (!server) await open();
    },
    get open() {
      return !!server;
    },
  };
}

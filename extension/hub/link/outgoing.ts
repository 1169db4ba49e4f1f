// This hub's side of one link: it connects to the other repository's hub, proves who it is (its
// node key) and checks who answers (the key recorded at the first agreed contact), then delivers
// the outbox entries for that repository in order. An entry leaves the outbox only once the other
// hub has answered that its store holds it; a crash on either side before that sends it again,
// and the other hub takes it once (by message id). While the other hub is not running, entries
// wait in the outbox; its start (it connects here too) wakes this loop at once.
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { outboxFor } from '../bus/links';
import type { BusEvent, OutboxEntry } from '../bus/model';
import type { LinkHost } from './linkHost';
import { signWire, verifyWire, type NodeKey } from '../matrix/keys';
import { wireOf } from '../matrix/wire';
import { greetFirst } from '../../shared/greet';
import { hubSockets } from '../../shared/discovery';
import { linkedPeersSchema } from '../../protocol/linkSchema';
import {
  LINK_DELIVER,
  LINK_PEERS,
  LINK_PROVE,
  LINK_ROSTER_CHANGED,
  linkProofText,
  type LinkDeliverAnswer,
  type LinkedPeer,
  type LinkView,
} from '../../protocol/link';
import type { Agreements } from './agreements';
import type { Log } from '../../protocol/hubLog';

/** Entries per delivery: a backlog drains at up to this many per round trip. */
const BATCH = 100;
const MAX_BACKOFF_MS = 2000;

class Refused extends Error {
  constructor(
    message: string,
    readonly state: 'waiting' | 'refused',
  ) {
    super(message);
  }
}

export interface OutgoingDeps {
  hub: LinkHost;
  agreements: Agreements;
  key: NodeKey;
  log: Log;
  /** Tells waiters an entry left the outbox (delivered or refused). */
  settled: (txnIds: string[]) => void;
}

export class OutgoingLink {
  state: LinkView['state'] = 'down';
  error?: string;
  peers: LinkedPeer[] = [];
  private connection?: MessageConnection;
  private socket?: Socket;
  private wake?: () => void;
  private stopped = false;
  private failures = 0;

  constructor(
    readonly root: string,
    private readonly deps: OutgoingDeps,
  ) {}

  /** Something changed (a new entry, the other hub connected here): try now. */
  poke(): void {
    this.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.drop();
    this.wake?.();
  }

  private drop(): void {
    this.connection?.dispose();
    this.socket?.destroy();
    this.connection = undefined;
    this.socket = undefined;
    this.peers = [];
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === Infinity ? undefined : setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  private set(state: LinkView['state'], error?: string): void {
    if (this.state === state && this.error === error) return;
    if (error && error !== this.error) this.deps.log(`link to ${this.root}: ${state}: ${error}`, 'warn');
    this.state = state;
    this.error = error;
    this.deps.hub.linkChanged();
  }

  async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.connection) {
        try {
          await this.connect();
          this.failures = 0;
        } catch (e) {
          if (this.stopped) return;
          this.drop();
          if (e instanceof Refused) this.set(e.state, e.message);
          else this.set('down', `its hub is not running (${(e as Error).message})`);
          await this.sleep(e instanceof Refused ? 10_000 : Math.min(100 * 2 ** this.failures++, MAX_BACKOFF_MS));
          continue;
        }
      }
      const name = this.deps.agreements.agreed(this.root)?.name;
      const entries = name ? outboxFor(this.deps.hub.state, name).slice(0, BATCH) : [];
      if (entries.length === 0) {
        await this.sleep(Infinity);
        continue;
      }
      try {
        await this.deliver(entries);
      } catch (e) {
        if (this.stopped) return;
        this.deps.log(`link to ${name}: delivery interrupted (${(e as Error).message}); sent again once it answers`);
        this.drop();
        this.set('down', (e as Error).message);
      }
    }
  }

  private async connect(): Promise<void> {
    const { agreements, key, hub } = this.deps;
    const env = { ...process.env };
    delete env.HANDOFF_HUB; // that is this hub's, not the other repository's
    const nonce = randomBytes(16).toString('hex');
    const ownRoot = hub.options.workspace;
    const greeted = await greetFirst(
      [...hubSockets(env, this.root)],
      { handoff: 1, kind: 'link', link: { repo: agreements.name, root: ownRoot, key: key.publicKey, nonce } },
      5000,
    ).catch((e: Error) => {
      if (/is not linked to/.test(e.message)) throw new Refused(e.message, 'waiting');
      if (/link/.test(e.message) && !(e as NodeJS.ErrnoException).code) throw new Refused(e.message, 'refused');
      throw e;
    });
    const { socket, reply, rest } = greeted;
    this.socket = socket;
    const l = reply.link;
    if (!l) throw new Refused('the hub there does not speak links (an older Handoff): update it', 'refused');
    const agreement = agreements.agreed(this.root);
    if (!agreement) throw new Refused('unlinked here', 'refused');
    if (l.root !== this.root) throw new Refused(`the hub there serves ${l.root}, not ${this.root}`, 'refused');
    if (agreement.key && agreement.key !== l.key)
      throw new Refused(
        `its hub answers with another node key than the one recorded when the link was agreed (its store was replaced?): nothing is delivered. Unlink and link it again on both sides if that is expected.`,
        'refused',
      );
    if (!verifyWire(l.key, { proof: linkProofText(nonce, l.root, ownRoot), sig: l.sig }))
      throw new Refused('its hub did not sign our nonce with its key', 'refused');
    const clash = agreements.byName(l.repo);
    if (l.repo === agreements.name || (clash && clash.root !== this.root))
      throw new Refused(
        `it is called ${l.repo}, like ${l.repo === agreements.name ? 'this repository' : clash!.root}: names must be unique on the machine (handoff link --name NEW in one of them)`,
        'refused',
      );
    if (agreement.name && agreement.name !== l.repo)
      throw new Refused(
        `it was linked as ${agreement.name} and now says it is ${l.repo}: addresses would change under the handoffs; unlink and link again to take the new name`,
        'refused',
      );
    if (rest.length) socket.unshift(rest);
    const connection = createMessageConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
    connection.onClose(() => {
      if (this.connection !== connection) return;
      this.drop();
      this.set('down', 'its hub went away');
      this.poke();
    });
    connection.onNotification(LINK_ROSTER_CHANGED, () => void this.roster());
    connection.listen();
    socket.resume();
    this.connection = connection;
    await connection.sendRequest(LINK_PROVE, {
      sig: signWire(key, { proof: linkProofText(l.nonce, ownRoot, this.root) }),
    });
    await agreements.pin(this.root, l.repo, l.key);
    this.set('linked');
    await this.roster();
  }

  /** The other hub's identities: addressable here as `name@repo`, and their live sessions for list_peers. */
  private async roster(): Promise<void> {
    const connection = this.connection;
    const name = this.deps.agreements.agreed(this.root)?.name;
    if (!connection || !name) return;
    try {
      // Proven by its key, yet still another repository's words: names, or nothing is kept.
      const said = linkedPeersSchema.safeParse(await connection.sendRequest<unknown>(LINK_PEERS));
      if (!said.success) throw new Error(`its answer is not a list of its names: ${said.error.issues[0]?.message}`);
      this.peers = said.data;
      const { hub } = this.deps;
      const events: BusEvent[] = [];
      for (const p of this.peers) {
        const qualified = `${p.name}@${name}`;
        const known = hub.state.identities[qualified];
        if (known && known.roles.join() === p.roles.join()) continue;
        events.push({ type: 'identity', name: qualified, at: hub.now(), roles: p.roles });
      }
      if (events.length) await hub.applyRemote(events);
      hub.linkChanged();
    } catch (e) {
      this.deps.log(`link to ${name}: could not read its identities: ${(e as Error).message}`, 'warn');
    }
  }

  private async deliver(entries: OutboxEntry[]): Promise<void> {
    const { hub, key, agreements } = this.deps;
    const signer = (wire: object) => signWire(key, wire);
    const items = entries.map((e) => wireOf(e, agreements.name, signer));
    const answer = await this.connection!.sendRequest<LinkDeliverAnswer>(LINK_DELIVER, { items });
    const at = hub.now();
    const events: BusEvent[] = entries.map((e, i) => {
      const r = answer.results[i];
      return r === 'taken'
        ? { type: 'relayed', txnId: e.txnId, eventId: `link:${agreements.agreed(this.root)?.name}`, at }
        : {
            type: 'relay-failed',
            txnId: e.txnId,
            reason: `the linked repository refused it: ${r?.refused ?? 'no answer for it'}`,
            at,
          };
    });
    // Lost in a crash before it lands, each entry is delivered again and taken once there.
    await hub.applyRemote(events);
    this.deps.settled(entries.map((e) => e.txnId));
  }
}

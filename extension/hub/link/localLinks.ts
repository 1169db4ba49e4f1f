// The repositories on this machine linked to this one (docs/design.md › Two repositories, one
// machine): the agreements, one outgoing link per agreed repository, and what the other hubs
// deliver here. Nothing flows until both sides have linked: a hub that is not in this hub's
// agreements is refused at its hello. The bus decides (bus/links.ts); this only translates.
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { destinationOf, takeLinked } from '../bus/links';
import type { BusEvent } from '../bus/model';
import type { LinkHost } from './linkHost';
import { BusError } from '../bus/errors';
import { loadNodeKey, signWire, verifyWire, type NodeKey } from '../matrix/keys';
import { HANDOFF_KEY, RECEIPT_KEY, localMessage, readMessage, readReceipt } from '../matrix/wire';
import type { RelayOutcome } from '../../protocol/views';
import {
  REPO_NAME_PATTERN,
  linkProofText,
  type LinkDeliverAnswer,
  type LinkedPeer,
  type LinkHello,
  type LinkHelloReply,
  type LinksView,
} from '../../protocol/link';
import { Agreements } from './agreements';
import { OutgoingLink } from './outgoing';
import type { Log } from '../../protocol/hubLog';

/** Items in one delivery, at most (the sender sends up to 100). */
export const MAX_DELIVERY = 200;

export class LocalLinks {
  readonly agreements: Agreements;
  private key?: NodeKey;
  private readonly outgoing = new Map<string, OutgoingLink>();
  /** Connections other hubs opened here, by their root: closed when their link is removed. */
  private readonly incoming = new Map<string, Set<() => void>>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /** One delivery at a time: two copies of a handoff racing in must not both find it new. */
  private ingesting: Promise<unknown> = Promise.resolve();
  private stopChanges?: () => void;

  constructor(
    private readonly hub: LinkHost,
    private readonly log: Log,
  ) {
    this.agreements = new Agreements(hub.options.storeDir, hub.options.workspace, (l) => log(l, 'error'));
  }

  get name(): string {
    return this.agreements.name;
  }

  /** After the store opened: the node key, and a link for each agreement. */
  start(): void {
    try {
      this.key = loadNodeKey(this.hub.options.storeDir);
    } catch (e) {
      this.log(`no node key (${(e as Error).message}): no repository can be linked`, 'error');
      return;
    }
    for (const a of this.agreements.all()) if (!a.unlinked) this.open(a.root);
    this.stopChanges = this.hub.onChanged(() => {
      for (const l of this.outgoing.values()) l.poke();
    });
  }

  close(): void {
    this.stopChanges?.();
    for (const l of this.outgoing.values()) l.stop();
    this.outgoing.clear();
    for (const closers of this.incoming.values()) for (const c of closers) c();
  }

  private open(root: string): void {
    if (this.outgoing.has(root) || !this.key) return;
    const link = new OutgoingLink(root, {
      hub: this.hub,
      agreements: this.agreements,
      key: this.key,
      log: this.log,
      settled: (txnIds) => this.settled(txnIds),
    });
    this.outgoing.set(root, link);
    void link.run();
  }

  /** The names outbox entries are routed by (every repository ever linked: what waits for an unlinked one stays). */
  names(): ReadonlySet<string> {
    return this.agreements.names();
  }

  /** Names of repositories linked now (agreed both ways at least once), for addressing. */
  agreedNames(): ReadonlySet<string> {
    return new Set(this.agreements.all().flatMap((a) => (a.name && !a.unlinked ? [a.name] : [])));
  }

  // ---- the user's acts (control requests) ----

  async link(root: string): Promise<LinksView> {
    if (!isAbsolute(root) || !existsSync(root) || !statSync(root).isDirectory())
      throw new BusError('invalid_input', `${root} is not a folder on this machine: link a repository's folder.`);
    if (root === this.hub.options.workspace)
      throw new BusError('invalid_input', `${root} is this repository: link another one.`);
    if (!this.key) throw new BusError('store_unavailable', 'This hub has no node key, so it cannot be linked.');
    await this.agreements.add(root, this.hub.now());
    this.open(root);
    this.outgoing.get(root)?.poke();
    this.hub.linkChanged();
    return this.view();
  }

  async unlink(root: string): Promise<LinksView> {
    if (!(await this.agreements.remove(root)))
      throw new BusError('invalid_input', `${root} is not linked to this repository. handoff status lists what is.`);
    this.outgoing.get(root)?.stop();
    this.outgoing.delete(root);
    for (const c of this.incoming.get(root) ?? []) c();
    this.incoming.delete(root);
    this.hub.linkChanged();
    return this.view();
  }

  async rename(name: string): Promise<LinksView> {
    if (!REPO_NAME_PATTERN.test(name))
      throw new BusError(
        'invalid_input',
        `"${name}" is not a repository name: letters, digits, '.', '_' or '-', up to 64.`,
      );
    if (this.agreements.all().some((a) => a.name))
      throw new BusError(
        'invalid_input',
        `This repository is known as ${this.name} to the repositories linked to it: its name changes only before the first link (unlinking keeps it, as handoffs may still be addressed to it).`,
      );
    await this.agreements.rename(name);
    this.hub.linkChanged();
    return this.view();
  }

  // ---- the other hubs, on this hub's socket (serve/linkService.ts) ----

  /** A linking hub's hello: refused unless the user linked its repository here too. */
  answer(h: LinkHello['link']): { error: string } | { reply: LinkHelloReply; nonce: string } {
    const own = this.hub.options.workspace;
    const a = this.agreements.agreed(h.root);
    if (!a || !this.key)
      return {
        error: `${own} is not linked to ${h.root}: run \`handoff link ${h.root}\` in ${own} (or its editor's "Handoff: Link Repository") to agree. Nothing flows until both have.`,
      };
    if (a.key && a.key !== h.key)
      return {
        error: `${h.root} speaks with another node key than the one recorded when the link was agreed: refused (unlink and link it again on both sides if its store was replaced).`,
      };
    const clash = this.agreements.byName(h.repo);
    if (h.repo === this.name || (clash && clash.root !== h.root))
      return {
        error: `the link name ${h.repo} is taken here (${h.repo === this.name ? 'this repository' : clash!.root}): names must be unique on the machine (handoff link --name NEW).`,
      };
    if (a.name && a.name !== h.repo)
      return {
        error: `${h.root} was linked here as ${a.name}, not ${h.repo}: unlink and link again to take the new name.`,
      };
    const nonce = randomBytes(16).toString('hex');
    const sig = signWire(this.key, { proof: linkProofText(h.nonce, own, h.root) });
    return { reply: { repo: this.name, root: own, key: this.key.publicKey, nonce, sig }, nonce };
  }

  /** The linking hub signed our nonce with the key it named: recorded, durably, before it is served. */
  async proven(h: LinkHello['link'], nonce: string, sig: string, close: () => void): Promise<boolean> {
    const own = this.hub.options.workspace;
    if (!verifyWire(h.key, { proof: linkProofText(nonce, h.root, own), sig })) return false;
    if (!this.agreements.agreed(h.root)) return false;
    await this.agreements.pin(h.root, h.repo, h.key);
    const closers = this.incoming.get(h.root) ?? new Set();
    closers.add(close);
    this.incoming.set(h.root, closers);
    // It is up: what waits here for it goes now, not after a backoff.
    this.outgoing.get(h.root)?.poke();
    this.hub.linkChanged();
    return true;
  }

  closed(root: string, close: () => void): void {
    this.incoming.get(root)?.delete(close);
  }

  /** Whether a connection proven as `root` may still deliver (the user may have unlinked it since). */
  stillLinked(root: string, key: string): boolean {
    return this.agreements.agreed(root)?.key === key;
  }

  /** This hub's own identities, for a linked hub's list_peers. */
  localPeers(): LinkedPeer[] {
    return Object.values(this.hub.state.identities)
      .filter((i) => !i.name.includes('@'))
      .map((i) => ({ name: i.name, roles: i.roles, live_sessions: this.hub.sessions.count(i.name) }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * A delivery from the linked repository `peer` (authenticated by `key`): each item checked and
   * translated, all of it committed in one journal record, then answered. Ingest is idempotent, so
   * a delivery sent again after a crash adds nothing.
   */
  ingest(peer: string, key: string, items: unknown[]): Promise<LinkDeliverAnswer> {
    const run = this.ingesting.then(() => this.ingestNow(peer, key, items));
    this.ingesting = run.catch(() => undefined);
    return run;
  }

  private async ingestNow(peer: string, key: string, items: unknown[]): Promise<LinkDeliverAnswer> {
    const own = this.name;
    const events: BusEvent[] = [];
    const pending = new Set<string>();
    const knows = (id: string) => this.hub.knows(id);
    const results: LinkDeliverAnswer['results'] = items.map((item) => {
      const o = (item && typeof item === 'object' ? item : {}) as Record<string, unknown>;
      let taken: BusEvent[] | string;
      if (o.message !== undefined) {
        const w = readMessage({ [HANDOFF_KEY]: o.message });
        if (typeof w === 'string') taken = w;
        else if (!verifyWire(key, o.message)) taken = `handoff ${w.id} is not signed by ${peer}'s node key`;
        else {
          const m = localMessage(
            w,
            own,
            { event_id: `$link.${w.id}`, sender: `link:${peer}` } as never,
            `link:${peer}`,
          );
          taken = m
            ? takeLinked(this.hub.state, { kind: 'message', message: m }, own, peer, knows, pending)
            : `handoff ${w.id} has no recipient in ${own}`;
        }
      } else if (o.receipt !== undefined) {
        const w = readReceipt({ [RECEIPT_KEY]: o.receipt });
        if (typeof w === 'string') taken = w;
        else if (!verifyWire(key, o.receipt)) taken = `a receipt by ${w.by} is not signed by ${peer}'s node key`;
        else taken = takeLinked(this.hub.state, { kind: 'receipt', wire: w }, own, peer, knows, pending);
      } else taken = 'neither a handoff nor a receipt';
      if (typeof taken === 'string') {
        this.log(`link from ${peer}: refused an item: ${taken}`, 'warn');
        return { refused: taken };
      }
      events.push(...taken);
      return 'taken';
    });
    if (events.length) await this.hub.applyRemote(events);
    return { results };
  }

  // ---- sending and views ----

  private settled(txnIds: string[]): void {
    for (const t of txnIds) {
      for (const w of this.waiters.get(t) ?? []) w();
      this.waiters.delete(t);
    }
  }

  /** Where a handoff to a linked repository is, waiting up to `waitMs` for the other hub to hold it. */
  async whereIs(messageId: string, destination: string, waitMs: number): Promise<RelayOutcome> {
    const txnId = `handoff.${messageId}`;
    if (this.hub.state.relay?.outbox[txnId] && waitMs > 0) {
      await new Promise<void>((resolve) => {
        const set = this.waiters.get(txnId) ?? new Set();
        this.waiters.set(txnId, set);
        const done = () => {
          clearTimeout(timer);
          set.delete(done);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        set.add(done);
      });
    }
    const hot = this.hub.state.hot[messageId];
    if (hot?.relayed) return { state: 'in_their_hub', repository: destination, at: hot.relayed.at };
    const failed = Object.values(hot?.deliveries ?? {}).find((d) => d.state === 'failed' && d.failure);
    if (failed?.failure) return { state: 'refused', reason: failed.failure.reason };
    const a = this.agreements.byName(destination);
    const link = a ? this.outgoing.get(a.root) : undefined;
    const why = !a
      ? 'that repository is not linked'
      : a.unlinked
        ? `${destination} was unlinked: it waits until the repository is linked again`
        : link?.state === 'linked'
          ? `${destination}'s hub has not answered yet`
          : `${destination}'s hub is not running (${link?.error ?? 'not reached yet'}): it is delivered when that hub starts`;
    return {
      state: 'in_outbox',
      repository: destination,
      note: `${why}; never pushed there until its hub holds it, and taken there once`,
      last_error: link?.error,
    };
  }

  view(): LinksView {
    const outbox = Object.values(this.hub.state.relay?.outbox ?? {});
    return {
      name: this.name,
      links: this.agreements.all().map((a) => {
        const link = this.outgoing.get(a.root);
        return {
          ...(a.name ? { name: a.name } : {}),
          root: a.root,
          state: a.unlinked ? 'unlinked' : (link?.state ?? 'down'),
          ...(link?.error && link.state !== 'linked' ? { error: link.error } : {}),
          ...(a.key ? { key: a.key } : {}),
          linkedAt: a.linkedAt,
          outbox: a.name ? outbox.filter((e) => destinationOf(e) === a.name).length : 0,
          peers: link?.state === 'linked' ? link.peers : [],
        };
      }),
    };
  }

  /** Live sessions of a linked repository's identity, as its hub last said; undefined when its link is not up. */
  liveSessions(identity: string): number | undefined {
    const at = identity.indexOf('@');
    const a = this.agreements.byName(identity.slice(at + 1));
    const link = a && !a.unlinked ? this.outgoing.get(a.root) : undefined;
    if (!link || link.state !== 'linked') return undefined;
    return link.peers.find((p) => p.name === identity.slice(0, at))?.live_sessions ?? 0;
  }

  /** A linked repository's link state, by its name. */
  stateOf(name: string): string | undefined {
    const a = this.agreements.byName(name);
    if (!a) return undefined;
    return a.unlinked ? 'unlinked' : (this.outgoing.get(a.root)?.state ?? 'down');
  }
}

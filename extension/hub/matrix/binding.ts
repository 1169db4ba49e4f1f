// Which Matrix account speaks for which node (G9). A node is bound to the account that first
// announced it (journaled, so a later claim cannot take it over after a restart), or to the
// account the Matrix config names for it. Handoffs from a node's identities and receipts by them
// are taken only from that account; the node of an event comes from its sender's binding, never
// from its content alone. One account speaking for several nodes must be configured: the
// homeserver cannot tell such nodes apart, so each node also announces an Ed25519 key (bound with
// its first announcement, like the account): a node with a key speaks only with its signature.
import type { BusEvent } from '../bus/model';
import type { Hub } from '../hub';
import type { RawEvent } from './wire';
import type { Drops } from './drops';
import { isPersonNode } from './person';

export interface NodeBinding {
  node: string;
  user: string;
  how: 'configured' | 'this hub' | 'announced';
  /** Its events must carry a valid signature by its announced key. */
  signed: boolean;
}

export interface RefusedClaim {
  node: string;
  claimedBy: string;
  boundTo?: string;
  at: number;
  why: string;
}

export class NodeBindings {
  private readonly refused = new Map<string, RefusedClaim>();
  /** First claims seen in the sync being taken, not yet committed. */
  private readonly pending = new Map<string, { user: string; key?: string }>();

  constructor(
    private readonly hub: Hub,
    private readonly configured: Readonly<Record<string, string>>,
    private readonly ownUser: string,
    private readonly drops: Drops,
    private readonly ownKey?: string,
  ) {}

  /** The account that speaks for a node, if any has been settled. */
  boundTo(node: string): string | undefined {
    return (
      this.configured[node] ??
      (node === this.hub.node ? this.ownUser : undefined) ??
      this.hub.state.relay?.nodes?.[node]?.user ??
      this.pending.get(node)?.user
    );
  }

  /** The node's announced Ed25519 public key, once bound. */
  keyOf(node: string): string | undefined {
    if (node === this.hub.node) return this.ownKey;
    return this.hub.state.relay?.nodes?.[node]?.key ?? this.pending.get(node)?.key;
  }

  speaksFor(node: string, sender: string): boolean {
    return this.boundTo(node) === sender;
  }

  all(): NodeBinding[] {
    const out = new Map<string, NodeBinding>();
    for (const [node, b] of Object.entries(this.hub.state.relay?.nodes ?? {}))
      out.set(node, { node, user: b.user, how: 'announced', signed: !!b.key });
    out.set(this.hub.node, { node: this.hub.node, user: this.ownUser, how: 'this hub', signed: !!this.ownKey });
    for (const [node, user] of Object.entries(this.configured))
      out.set(node, { node, user, how: 'configured', signed: !!this.keyOf(node) });
    return [...out.values()].sort((a, b) => a.node.localeCompare(b.node));
  }

  /** Every account that speaks for a node, claims of the sync being taken included: hubs' accounts. */
  accounts(): Set<string> {
    const out = new Set(this.all().map((b) => b.user));
    for (const p of this.pending.values()) out.add(p.user);
    return out;
  }

  /** Called once the sync that carried the pending claims is committed (or dropped). */
  settle(): void {
    this.pending.clear();
  }

  /**
   * A node announcement's claim. True if its sender speaks for the node; a first claim on a free
   * node binds it (the `node-bound` event goes into `events`). Anything else is refused, counted
   * and kept for the status.
   */
  claim(ev: RawEvent, node: string, key: string | undefined, events: BusEvent[]): boolean {
    const bound = this.boundTo(node);
    if (bound === ev.sender) {
      const known = this.keyOf(node);
      if (known && key !== known)
        return this.refuse(
          ev,
          node,
          bound,
          `${node} announced another key than the one it is bound to; its events are refused until it uses its own (a hub whose store was replaced needs a new node name)`,
        );
      if (!known && key) {
        this.pending.set(node, { user: ev.sender, key });
        events.push({ type: 'node-bound', node, user: ev.sender, at: ev.origin_server_ts, key });
      }
      return true;
    }
    if (isPersonNode(node))
      return this.refuse(
        ev,
        node,
        undefined,
        `node names starting with "matrix:" stand for people in the room; no hub may claim one`,
      );
    if (bound) return this.refuse(ev, node, bound, `${node} is bound to ${bound}; ${ev.sender} may not speak for it`);
    const others = this.all()
      .filter((b) => b.user === ev.sender)
      .map((b) => b.node);
    for (const [n, p] of this.pending) if (p.user === ev.sender) others.push(n);
    if (others.length) {
      return this.refuse(
        ev,
        node,
        undefined,
        `${ev.sender} already speaks for ${others.join(', ')}; several nodes on one Matrix account must be listed in the Matrix config's "nodes"`,
      );
    }
    this.pending.set(node, { user: ev.sender, key });
    events.push({ type: 'node-bound', node, user: ev.sender, at: ev.origin_server_ts, ...(key ? { key } : {}) });
    return true;
  }

  private refuse(ev: RawEvent, node: string, boundTo: string | undefined, why: string): false {
    const key = `${node}\n${ev.sender}`;
    if (!this.refused.has(key))
      this.refused.set(key, { node, claimedBy: ev.sender, boundTo, at: ev.origin_server_ts, why });
    this.drops.note('node_claim_refused', ev, why);
    return false;
  }

  refusedClaims(): RefusedClaim[] {
    return [...this.refused.values()];
  }

  /** Lines for the panel: refused claims, and accounts that speak for several nodes. */
  notices(): string[] {
    const lines = this.refusedClaims().map((c) => `Refused: ${c.claimedBy} claimed node ${c.node} — ${c.why}.`);
    const byUser = new Map<string, NodeBinding[]>();
    for (const b of this.all()) byUser.set(b.user, [...(byUser.get(b.user) ?? []), b]);
    for (const [user, bindings] of byUser) {
      if (bindings.length < 2) continue;
      const nodes = bindings.map((b) => b.node).join(', ');
      lines.push(
        bindings.every((b) => b.signed)
          ? `Nodes ${nodes} share the Matrix account ${user}: only their announced keys tell them apart (each event is signed).`
          : `Nodes ${nodes} share the Matrix account ${user}: they cannot be told apart (each could speak for the others).`,
      );
    }
    return lines;
  }
}

// Which Matrix devices an encrypted room's keys go to, and whose events are believed. A hub's
// device is verified by what the bus already trusts: its node's Ed25519 key (bound with the node's
// first announcement) signs "device D with key K speaks for node N on account U", and the hub
// announces that claim. A hub account's device without a valid claim — one a homeserver operator
// added, or a stolen token's — is refused: no room keys, its events dropped. People's devices
// cannot be vouched for that way; they get the keys (a person must read) and are shown as
// unverified, never silently trusted.
import { signWire, verifyWire, type NodeKey } from './keys';
import type { DeviceClaim } from './wire';

export type DeviceTrust = 'this hub' | 'verified' | 'refused' | 'unverified';

export interface KnownDevice {
  user: string;
  id: string;
  ed25519?: string;
}

function claimed(node: string, user: string, id: string, ed25519: string) {
  return { node, user, device_id: id, ed25519 };
}

export function signDevice(key: NodeKey, node: string, user: string, id: string, ed25519: string): DeviceClaim {
  return { id, ed25519, sig: signWire(key, claimed(node, user, id, ed25519)) };
}

export function claimValid(nodeKey: string, node: string, user: string, c: DeviceClaim): boolean {
  return verifyWire(nodeKey, { ...claimed(node, user, c.id, c.ed25519), sig: c.sig });
}

/** The latest valid device claim of each node, from the nodes' announcements. */
export class DeviceClaims {
  private readonly byNode = new Map<string, { user: string; id: string; ed25519: string }>();

  /**
   * Takes a node's claim if its bound key signed it. Anything else is false and changes nothing:
   * whoever can write the account's state cannot void a device the node signed for.
   */
  note(node: string, user: string, nodeKey: string | undefined, c: DeviceClaim | undefined): boolean {
    if (!c || !nodeKey || !claimValid(nodeKey, node, user, c)) return false;
    this.byNode.set(node, { user, id: c.id, ed25519: c.ed25519 });
    return true;
  }

  /** The node whose claim names this device with this key, if any. */
  nodeOf(d: KnownDevice): string | undefined {
    for (const [node, c] of this.byNode) if (c.user === d.user && c.id === d.id && c.ed25519 === d.ed25519) return node;
    return undefined;
  }

  /** Whether any node on this account has claimed a device (else a device of it may yet be claimed). */
  hasUser(user: string): boolean {
    for (const c of this.byNode.values()) if (c.user === user) return true;
    return false;
  }
}

/**
 * A device's standing. `hubAccounts`: accounts bound to a node (they speak for hubs, so only
 * claimed devices count); any other allowed account is a person's.
 */
export function trustOf(
  d: KnownDevice,
  own: { user: string; id: string },
  claims: DeviceClaims,
  hubAccounts: ReadonlySet<string>,
): DeviceTrust {
  if (d.user === own.user && d.id === own.id) return 'this hub';
  if (claims.nodeOf(d)) return 'verified';
  return hubAccounts.has(d.user) ? 'refused' : 'unverified';
}

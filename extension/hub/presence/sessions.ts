// Live sessions, in memory only: an entry exists while its connection is open. Nothing about
// liveness is read from disk — stale pid and lock files kept dead peers "alive" elsewhere.
import type { CheckoutPlace } from '../../protocol/hello';
import type { HookTerminal } from '../../protocol/hook';
import { createHash } from 'node:crypto';
import type { PushKind } from '../bus/model';

const LABEL = /^s-[0-9a-f]{12}$/;

/** A label, not a key: the hub takes no key of this shape (agentConnection), so the two never meet. */
export function isSessionLabel(s: string): boolean {
  return LABEL.test(s);
}

/**
 * How a session is named to other agents: a stable label, not its key. A key is the session's
 * secret (a connection presenting it replaces the session), so only its owner is ever shown it.
 * A label is its own label: records from other nodes arrive named by label, and read the same here.
 */
export function sessionLabel(key: string): string {
  return isSessionLabel(key) ? key : `s-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

export interface PushPayload {
  id: string;
  from: string;
  thread: string;
  kind: PushKind;
  text: string;
}

export interface Session {
  /** Stable across reconnects when the agent sets HANDOFF_SESSION; random otherwise. */
  readonly key: string;
  readonly identity: string;
  readonly roles: string[];
  readonly connectedAt: number;
  readonly client: string;
  /** What this session's CLI version cannot do where it runs (its MCP clientInfo; agentVersions.ts). */
  readonly limits?: readonly string[];
  /** The agent CLI process that spawned the bridge: its hooks run under the same process. */
  readonly agentPid?: number;
  /** The bridge's pid and its parents as the kernel has them, when the bridge proved its process. */
  readonly ancestry?: readonly number[];
  /** The tmux pane the bridge says its agent runs in. */
  readonly terminal?: HookTerminal;
  /** The checkout the bridge says its agent runs in. */
  readonly checkout?: CheckoutPlace;
  lastSeen: number;
  /** The same bridge back after losing its hub: whatever was pushed to this key, its client has. */
  readonly resumed?: boolean;
  /** Message ids pushed on this connection: a connection never gets the same message twice. */
  readonly pushed: Set<string>;
  isOpen(): boolean;
  /** Writes the push to the agent; false if the connection is gone. */
  deliver(push: PushPayload): boolean;
  /** Drops the connection (replaced by a reconnect, or failed a heartbeat). */
  close(reason: string): void;
}

const NONE: readonly Session[] = Object.freeze([]);

export class SessionRegistry {
  private readonly byKey = new Map<string, Session>();
  /**
   * Each identity's sessions, looked up twice per recipient of every send. Replaced, not changed,
   * when a session comes or goes: a push loop walking the old list while a failed write removes
   * its session sees every session once.
   */
  private readonly byIdentity = new Map<string, readonly Session[]>();

  /** Adds a session; a reconnect with the same key replaces (and closes) its old entry. */
  add(session: Session): Session | undefined {
    const old = this.byKey.get(session.key);
    this.byKey.set(session.key, session);
    if (old) this.unlist(old);
    this.byIdentity.set(session.identity, [...(this.byIdentity.get(session.identity) ?? []), session]);
    if (old && old !== session) old.close('replaced by a reconnect with the same session key');
    return old;
  }

  /** Removes the session only if it is still the current entry for its key. */
  remove(session: Session): boolean {
    if (this.byKey.get(session.key) !== session) return false;
    this.byKey.delete(session.key);
    this.unlist(session);
    return true;
  }

  private unlist(session: Session): void {
    const left = (this.byIdentity.get(session.identity) ?? []).filter((s) => s !== session);
    if (left.length > 0) this.byIdentity.set(session.identity, left);
    else this.byIdentity.delete(session.identity);
  }

  get(key: string): Session | undefined {
    return this.byKey.get(key);
  }

  forIdentity(identity: string): readonly Session[] {
    return this.byIdentity.get(identity) ?? NONE;
  }

  count(identity: string): number {
    return this.forIdentity(identity).length;
  }

  identities(): Set<string> {
    return new Set(this.byIdentity.keys());
  }

  all(): Session[] {
    return [...this.byKey.values()];
  }
}

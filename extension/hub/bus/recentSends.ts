// Recent sends for the probable-duplicate window: derived, not stored (rebuilt from the open
// messages at start). Every send inside the window is held — 100 000 of them after a burst — so an
// entry is one map slot under a 32-bit hash of sender, recipients and body, pointing at the message
// itself (already in memory). A hit is confirmed against the message: two sends that share a
// hash never pass for each other.
import { createHash } from 'node:crypto';
import { bodyOf } from './body';
import type { StoredMessage } from './model';

/** The message itself, its body perhaps left in the checkpoint (bus/body.ts): read back on a hash hit. */
export type Sent = Pick<StoredMessage, 'id' | 'from' | 'recipients' | 'body' | 'sentAt'>;

const recipientsKey = (recipients: readonly string[]) => JSON.stringify([...recipients].sort());

function hashOf(from: string, recipients: string, body: string): number {
  return createHash('sha256').update(`${from}\n${recipients}\n`).update(body).digest().readInt32LE(0);
}

function matches(m: Sent, from: string, recipients: string, body: string): boolean {
  return m.from === from && recipientsKey(m.recipients) === recipients && bodyOf(m) === body;
}

export class RecentSends {
  /** A hash's one send, or its sends when (rarely) several share it. */
  private readonly byHash = new Map<number, Sent | Sent[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The remembered send of this body from `from` to these recipients, if any. */
  find(from: string, recipients: readonly string[], body: string): Sent | undefined {
    const key = recipientsKey(recipients);
    const slot = this.byHash.get(hashOf(from, key, body));
    if (slot === undefined) return undefined;
    return (Array.isArray(slot) ? slot : [slot]).find((m) => matches(m, from, key, body));
  }

  /** Remembers the send in place of an earlier one of the same body; returns how to forget it (or what replaced it since). */
  add(m: Sent): () => void {
    const key = recipientsKey(m.recipients);
    const body = bodyOf(m);
    const hash = hashOf(m.from, key, body);
    const forget = () => {
      const slot = this.byHash.get(hash);
      if (slot !== undefined) this.keep(hash, slot, (x) => !matches(x, m.from, key, body));
    };
    forget();
    const slot = this.byHash.get(hash);
    this.byHash.set(hash, slot === undefined ? m : Array.isArray(slot) ? [...slot, m] : [slot, m]);
    this.count++;
    return forget;
  }

  /** Forgets the sends `old` says are past the window. */
  prune(old: (m: Sent) => boolean): void {
    for (const [hash, slot] of this.byHash) this.keep(hash, slot, (m) => !old(m));
  }

  private keep(hash: number, slot: Sent | Sent[], keep: (m: Sent) => boolean): void {
    const list = Array.isArray(slot) ? slot : [slot];
    const kept = list.filter(keep);
    if (kept.length === list.length) return;
    this.count -= list.length - kept.length;
    if (kept.length === 0) this.byHash.delete(hash);
    else this.byHash.set(hash, kept.length === 1 ? kept[0] : kept);
  }
}

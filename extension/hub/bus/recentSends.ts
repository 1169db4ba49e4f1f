// Recent sends for the probable-duplicate window: derived, not stored (rebuilt from the open
// messages at start). Every send inside the window is held — 100 000 of them after a burst — so an
// entry is one map slot under a 32-bit hash of sender, recipients and body, pointing at the message
// itself (already in memory). A hit is confirmed against the message: two sends that share a
// hash never pass for each other.
import { randomBytes } from 'node:crypto';
import { bodyOf } from './body';
import type { StoredMessage } from './model';

/** The message itself, its body perhaps left in the checkpoint (bus/body.ts): read back on a hash hit. */
export type Sent = Pick<StoredMessage, 'id' | 'from' | 'recipients' | 'body' | 'sentAt'>;

const recipientsKey = (recipients: readonly string[]) => JSON.stringify([...recipients].sort());

/** Drawn at start: which sends share a slot cannot be worked out from outside, so cannot be arranged. */
const SEED = randomBytes(4).readInt32LE(0);

/**
 * FNV-1a over the UTF-16 code units, then murmur3's finaliser: a hit is confirmed anyway, so the
 * hash needs to spread, not to be a digest. 0.4 µs for a 300-character body where sha256 took
 * 1.5 µs, twice per send (the lookup, then remembering it).
 */
function mix(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return Math.imul(h ^ 0x0a, 0x01000193); // a separator, so ("ab","c") and ("a","bc") differ
}

function hashOf(from: string, recipients: string, body: string): number {
  let h = mix(mix(mix(SEED, from), recipients), body);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function matches(m: Sent, from: string, recipients: string, body: string): boolean {
  return m.from === from && recipientsKey(m.recipients) === recipients && bodyOf(m) === body;
}

/** A send's slot and recipients key, worked out once per send: the duplicate check, then remembering it. */
export interface Fingerprint {
  readonly hash: number;
  readonly recipients: string;
}

export class RecentSends {
  /** A hash's one send, or its sends when (rarely) several share it. */
  private readonly byHash = new Map<number, Sent | Sent[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  fingerprint(from: string, recipients: readonly string[], body: string): Fingerprint {
    const key = recipientsKey(recipients);
    return { hash: hashOf(from, key, body), recipients: key };
  }

  /** The remembered send of this body from `from` to these recipients, if any. */
  find(
    from: string,
    recipients: readonly string[],
    body: string,
    fp = this.fingerprint(from, recipients, body),
  ): Sent | undefined {
    const slot = this.byHash.get(fp.hash);
    if (slot === undefined) return undefined;
    return (Array.isArray(slot) ? slot : [slot]).find((m) => matches(m, from, fp.recipients, body));
  }

  /** Remembers the send in place of an earlier one of the same body; returns how to forget it (or what replaced it since). */
  add(m: Sent, fp?: Fingerprint): () => void {
    const body = bodyOf(m);
    const { hash, recipients } = fp ?? this.fingerprint(m.from, m.recipients, body);
    const forget = () => {
      const slot = this.byHash.get(hash);
      if (slot !== undefined) this.keep(hash, slot, (x) => !matches(x, m.from, recipients, body));
    };
    forget();
    const slot = this.byHash.get(hash);
    this.byHash.set(hash, slot === undefined ? m : Array.isArray(slot) ? [...slot, m] : [slot, m]);
    this.count++;
    return forget;
  }

  /**
   * The send is stored: its slot holds the hot set's copy from now on, whose body a checkpoint
   * leaves on disk, and not the draft, which would keep its body in memory for the whole window.
   */
  stored(draft: Sent, stored: Sent, fp: Fingerprint): void {
    const slot = this.byHash.get(fp.hash);
    if (slot === draft) this.byHash.set(fp.hash, stored);
    else if (Array.isArray(slot) && slot.includes(draft))
      this.byHash.set(
        fp.hash,
        slot.map((x) => (x === draft ? stored : x)),
      );
  }

  /** Forgets the sends `old` says are past the window. */
  prune(old: (m: Sent) => boolean): void {
    this.byHash.forEach((slot, hash) => this.keep(hash, slot, (m) => !old(m)));
  }

  private keep(hash: number, slot: Sent | Sent[], keep: (m: Sent) => boolean): void {
    if (!Array.isArray(slot)) {
      // Nearly every slot holds one send: no arrays for it (prune visits them all).
      if (keep(slot)) return;
      this.count--;
      this.byHash.delete(hash);
      return;
    }
    const kept = slot.filter(keep);
    if (kept.length === slot.length) return;
    this.count -= slot.length - kept.length;
    if (kept.length === 0) this.byHash.delete(hash);
    else this.byHash.set(hash, kept.length === 1 ? kept[0] : kept);
  }
}

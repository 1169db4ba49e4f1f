// Recent sends for the probable-duplicate window: derived, not stored (rebuilt from the open
// messages at start). An entry is one map slot under a 32-bit hash of sender, recipients and body,
// holding the send's id, sender, recipients and the body's sha256 — never the message, whose body
// would stay in memory for the whole window after it settled (#44: 3 000 sends of 64 KiB held
// 186 MiB). A hit is confirmed by the digest. The window is bounded in bytes as well as in time.
import { createHash, randomBytes } from 'node:crypto';
import { bodyOf } from './body';
import type { StoredMessage } from './model';

/** A send as it is added, its body perhaps left in the checkpoint (bus/body.ts). */
export type Sent = Pick<StoredMessage, 'id' | 'from' | 'recipients' | 'body' | 'sentAt'>;

/** One recipient is its own name (no new string per send: a name holds no bracket); several, their sorted list. */
const recipientsKey = (recipients: readonly string[]) =>
  recipients.length === 1 ? recipients[0] : JSON.stringify([...recipients].sort());

/** Drawn at start: which sends share a slot cannot be worked out from outside, so cannot be arranged. */
const SEED = randomBytes(4).readInt32LE(0);

/**
 * FNV-1a over the UTF-16 code units, then murmur3's finaliser: a hit is confirmed by the digest,
 * so the hash needs to spread, not to be one. 0.4 µs for a 300-character body where sha256 took
 * 1.5 µs: the lookup of every send hashes, only remembering it and a slot's hit take the digest.
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

/** What is kept of a send: no body (a 64 KiB body held for the 10-minute window was most of a busy hub), its digest. */
export interface Remembered {
  readonly id: string;
  readonly from: string;
  /** The recipients key. */
  readonly recipients: string;
  readonly sentAt: number;
  /**
   * The first 96 bits of the body's sha256: a hit is confirmed by it, so two bodies that share the
   * 32-bit slot never pass for each other (16 characters: a string V8 keeps small).
   */
  readonly digest: string;
  /** Its slot, so the queue of what came first holds the entries themselves. */
  readonly hash: number;
}

const digestOf = (body: string) => createHash('sha256').update(body).digest().subarray(0, 12).toString('base64');

/** About what an entry costs in the heap: the record, its strings, its map slot and queue place. */
const entryBytes = (r: Remembered) => 120 + 2 * (r.id.length + r.from.length + r.recipients.length) + 40;

/**
 * What the window may hold, in bytes: past it the oldest sends are forgotten first (a burst of
 * 100 000 sends in ten minutes is about 30 MiB at the default; the window then covers the newest).
 */
export const RECENT_SENDS_BYTES = 16 * 1024 * 1024;

/** A send's slot and recipients key, worked out once per send: the duplicate check, then remembering it. */
export interface Fingerprint {
  readonly hash: number;
  readonly recipients: string;
}

export class RecentSends {
  /** A hash's one send, or its sends when (rarely) several share it. */
  private readonly byHash = new Map<number, Remembered | Remembered[]>();
  /** Every entry in the order it was added (some forgotten since): the oldest go first. */
  private order: Remembered[] = [];
  private head = 0;
  private count = 0;
  private held = 0;

  constructor(private readonly maxBytes = RECENT_SENDS_BYTES) {}

  get size(): number {
    return this.count;
  }

  /** The bytes the entries are estimated to hold. */
  get bytes(): number {
    return this.held;
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
  ): Remembered | undefined {
    const slot = this.byHash.get(fp.hash);
    if (slot === undefined) return undefined;
    const digest = digestOf(body);
    return (Array.isArray(slot) ? slot : [slot]).find(
      (r) => r.from === from && r.recipients === fp.recipients && r.digest === digest,
    );
  }

  /** Remembers the send in place of an earlier one of the same body; returns how to forget it (or what replaced it since). */
  add(m: Sent, fp?: Fingerprint): () => void {
    const body = bodyOf(m);
    const { hash, recipients } = fp ?? this.fingerprint(m.from, m.recipients, body);
    const r: Remembered = { id: m.id, from: m.from, recipients, sentAt: m.sentAt, digest: digestOf(body), hash };
    const same = (x: Remembered) => x.from === r.from && x.recipients === r.recipients && x.digest === r.digest;
    const forget = () => {
      const slot = this.byHash.get(hash);
      if (slot !== undefined) this.keep(hash, slot, (x) => !same(x));
    };
    forget();
    const slot = this.byHash.get(hash);
    this.byHash.set(hash, slot === undefined ? r : Array.isArray(slot) ? [...slot, r] : [slot, r]);
    this.count++;
    this.held += entryBytes(r);
    this.order.push(r);
    while (this.held > this.maxBytes && this.dropOldest());
    return forget;
  }

  /** Forgets the sends `old` says are past the window: from the oldest on, until one is not. */
  prune(old: (m: Remembered) => boolean): void {
    while (this.head < this.order.length && old(this.order[this.head])) this.dropOldest();
    this.compact();
  }

  private dropOldest(): boolean {
    if (this.head >= this.order.length) return false;
    const r = this.order[this.head++];
    const slot = this.byHash.get(r.hash);
    if (slot !== undefined) this.keep(r.hash, slot, (x) => x !== r);
    return true;
  }

  /** The queue's front, and entries forgotten or replaced, are dropped once they are most of it. */
  private compact(): void {
    if (this.order.length - this.head > 2 * this.count + 1024 || this.head > this.order.length / 2) {
      const live = new Set<Remembered>();
      this.byHash.forEach((slot) => (Array.isArray(slot) ? slot : [slot]).forEach((x) => live.add(x)));
      this.order = this.order.slice(this.head).filter((e) => live.has(e));
      this.head = 0;
    }
  }

  private keep(hash: number, slot: Remembered | Remembered[], keep: (m: Remembered) => boolean): void {
    if (!Array.isArray(slot)) {
      // Nearly every slot holds one send: no arrays for it.
      if (keep(slot)) return;
      this.count--;
      this.held -= entryBytes(slot);
      this.byHash.delete(hash);
      return;
    }
    const kept = slot.filter(keep);
    if (kept.length === slot.length) return;
    for (const x of slot) if (!kept.includes(x)) this.held -= entryBytes(x);
    this.count -= slot.length - kept.length;
    if (kept.length === 0) this.byHash.delete(hash);
    else this.byHash.set(hash, kept.length === 1 ? kept[0] : kept);
  }
}

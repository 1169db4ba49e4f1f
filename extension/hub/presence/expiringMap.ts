// Per-session state the hub keeps in memory only: an entry lives while it is used and for `ttlMs`
// after, so a hub that has served thousands of sessions holds only the recent ones (the hook
// sessions were never dropped: 2 001 of them after 2 000 sessions). Entries are kept in order of
// last use, so expiring looks only at what expired; each use expires first, so what is read is live.

export interface ExpiringMapOptions<V, G> {
  /** An entry in use however long ago it was touched (a hook session with an idle waiter). */
  held?: (value: V) => boolean;
  /** What entries are also looked up by (a hook session's identity): each group holds only live entries. */
  groupOf?: (value: V) => G;
}

interface Entry<V> {
  value: V;
  usedAt: number;
}

export class ExpiringMap<K, V, G = never> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly groups = new Map<G, Set<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly options: ExpiringMapOptions<V, G> = {},
  ) {}

  /** The entry for `key`, made by `create` if there is none; used now. */
  use(key: K, create: () => V): V {
    this.expire();
    const entry = this.entries.get(key);
    const value = entry ? entry.value : create();
    if (entry) this.entries.delete(key);
    else if (this.options.groupOf) this.join(this.options.groupOf(value), value);
    this.entries.set(key, { value, usedAt: this.now() });
    return value;
  }

  /** Marks the entry for `key`, if it is still here, used now. */
  touch(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    entry.usedAt = this.now();
    this.entries.set(key, entry);
  }

  /** The entry for `key`, if it is live; not a use. */
  get(key: K): V | undefined {
    this.expire();
    return this.entries.get(key)?.value;
  }

  /** Drops the entry for `key`, if it is here. */
  delete(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    if (this.options.groupOf) this.leave(this.options.groupOf(entry.value), entry.value);
  }

  /** The live entries of a group. */
  group(g: G): Iterable<V> {
    this.expire();
    return this.groups.get(g) ?? [];
  }

  /** How many entries are live. */
  get size(): number {
    this.expire();
    return this.entries.size;
  }

  /** How many groups have a live entry. */
  get groupCount(): number {
    this.expire();
    return this.groups.size;
  }

  /** Drops what went unused for `ttlMs`, oldest first; a held entry counts as used now. */
  private expire(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (now - entry.usedAt <= this.ttlMs) return; // the rest were used later
      this.entries.delete(key);
      if (this.options.held?.(entry.value)) {
        entry.usedAt = now;
        this.entries.set(key, entry); // met again at the end of this walk, as used now: it stops there
      } else if (this.options.groupOf) {
        this.leave(this.options.groupOf(entry.value), entry.value);
      }
    }
  }

  private join(g: G, value: V): void {
    const members = this.groups.get(g) ?? new Set<V>();
    this.groups.set(g, members);
    members.add(value);
  }

  private leave(g: G, value: V): void {
    const members = this.groups.get(g);
    members?.delete(value);
    if (members?.size === 0) this.groups.delete(g);
  }
}

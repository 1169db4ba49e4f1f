// The hub's durable state. Three files in a private directory, one writer (the hub):
//   journal.ndjson   every bus event, appended and fdatasync'd before a send is acknowledged
//   state.json       the lowdb checkpoint: the hot (unsettled) state as of journal record n
//   archive.ndjson   settled messages, appended at checkpoints and looked up by offset
// Write cost does not grow with history: a send costs one batched append; a checkpoint rewrites
// only the hot document, and only after as many journal bytes as that document holds, so its
// amortised cost per send stays constant.
import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { apply, isSettled, pruneIdempotency } from '../bus/reduce';
import { emptyState, type BusEvent, type BusState, type HotMessage } from '../bus/model';
import { AppendLog } from './appendLog';
import { DurableJsonFile } from './durableJsonFile';
import { reviveHot, reviveState } from './revive';

const FORMAT = 1;
const MIN_CHECKPOINT_JOURNAL_BYTES = 512 * 1024;

interface JournalRecord {
  n: number;
  e: BusEvent[];
}

interface Checkpoint {
  format: number;
  journalN: number;
  state: BusState;
}

export interface ArchivedMessage extends HotMessage {
  archivedAt: number;
}

interface Commit {
  events: BusEvent[];
  resolve: () => void;
  reject: (e: Error) => void;
}

export interface StoreOptions {
  idempotencyWindowMs: number;
  /** Checkpoint once the journal holds this many bytes, or the hot document's size if larger. */
  minCheckpointBytes?: number;
  onError?: (what: string, e: unknown) => void;
}

export class Store {
  readonly state: BusState;
  private n: number;
  private queue: Commit[] = [];
  private draining?: Promise<void>;
  private lastCheckpointBytes: number;
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly db: Low<Checkpoint>,
    private readonly adapter: DurableJsonFile<Checkpoint>,
    private readonly journal: AppendLog<JournalRecord>,
    private readonly archive: AppendLog<ArchivedMessage>,
    private readonly archiveIndex: Map<string, { offset: number; length: number }>,
    private readonly options: StoreOptions,
  ) {
    this.state = db.data.state;
    this.n = db.data.journalN;
    // Paced by the document already on disk, so a restart with a large hot set does not checkpoint it again after 512 KiB.
    this.lastCheckpointBytes = adapter.bytesOnDisk;
  }

  /** Opens (or creates) the store and recovers: checkpoint + journal records after it. */
  static async open(dir: string, node: string, options: StoreOptions): Promise<Store> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // Another user who owns or may write this folder could rewrite the bus's history under us.
    const st = await lstat(dir);
    if (!st.isDirectory()) throw new Error(`${dir} is not a directory (a symlink?); the store needs a real folder of its own`);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new Error(`${dir} belongs to uid ${st.uid}, not to you; the store must be your own folder`);
    if (st.mode & 0o022) throw new Error(`${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)}); run chmod 700 on it`);
    const adapter = new DurableJsonFile<Checkpoint>(join(dir, 'state.json'), (c: Checkpoint) => {
      if (c?.state) reviveState(c.state);
      return c;
    });
    const db = new Low<Checkpoint>(adapter, { format: FORMAT, journalN: 0, state: emptyState(node) });
    await db.read();
    if (db.data.format !== FORMAT) throw new Error(`${join(dir, 'state.json')} has format ${db.data.format}; this Handoff reads format ${FORMAT}`);
    const archive = new AppendLog<ArchivedMessage>(join(dir, 'archive.ndjson'), reviveHot);
    const archiveIndex = new Map<string, { offset: number; length: number }>();
    for (const line of await archive.open()) archiveIndex.set(line.value.message.id, { offset: line.offset, length: line.length });
    const journal = new AppendLog<JournalRecord>(join(dir, 'journal.ndjson'), (r: JournalRecord) => r); // events hold no name-keyed records
    const records = await journal.open();
    const store = new Store(dir, db, adapter, journal, archive, archiveIndex, options);
    for (const { value } of records) {
      if (value.n <= store.n) continue; // already in the checkpoint
      for (const e of value.e) apply(store.state, e);
      store.n = value.n;
    }
    // A crash between archiving and checkpointing leaves a message in both: the hot copy wins.
    for (const id of Object.keys(store.state.hot)) archiveIndex.delete(id);
    return store;
  }

  /** Resolves once the events are on disk and applied; rejects if they could not be written. */
  commit(events: BusEvent[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      this.draining ??= this.drain();
    });
  }

  // Group commit: every commit waiting when a write starts shares its write and fdatasync.
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const first = this.n + 1;
      try {
        await this.journal.writeBatch(batch.map((c, i) => ({ n: first + i, e: c.events })));
      } catch (e) {
        for (const c of batch) c.reject(e as Error);
        continue;
      }
      this.n = first + batch.length - 1;
      for (const c of batch) for (const e of c.events) apply(this.state, e);
      for (const c of batch) c.resolve();
      if (this.journal.bytes > Math.max(this.options.minCheckpointBytes ?? MIN_CHECKPOINT_JOURNAL_BYTES, this.lastCheckpointBytes)) {
        await this.checkpoint().catch((e) => this.options.onError?.('checkpoint', e));
      }
    }
    this.draining = undefined;
  }

  /** Moves settled messages to the archive, rewrites the hot document, empties the journal. */
  private async checkpoint(): Promise<void> {
    const now = Date.now();
    const settled = Object.values(this.state.hot).filter((h) => isSettled(h, now));
    if (settled.length > 0) {
      const rows = settled.filter((h) => !this.archiveIndex.has(h.message.id)).map((h) => ({ ...h, archivedAt: now }));
      const places = await this.archive.writeBatch(rows);
      rows.forEach((r, i) => this.archiveIndex.set(r.message.id, places[i]));
      for (const h of settled) delete this.state.hot[h.message.id];
    }
    pruneIdempotency(this.state, now, this.options.idempotencyWindowMs);
    this.db.data.journalN = this.n;
    await this.db.write();
    this.lastCheckpointBytes = this.adapter.bytesOnDisk;
    await this.journal.truncate();
  }

  isArchived(id: string): boolean {
    return this.archiveIndex.has(id);
  }

  async archived(id: string): Promise<ArchivedMessage | undefined> {
    const at = this.archiveIndex.get(id);
    return at ? this.archive.readAt(at.offset, at.length) : undefined;
  }

  get archivedCount(): number {
    return this.archiveIndex.size;
  }

  /** Finishes pending writes and checkpoints, so the next start replays nothing. */
  async close(): Promise<void> {
    while (this.draining) await this.draining;
    this.closed = true;
    await this.checkpoint().catch((e) => this.options.onError?.('checkpoint on close', e));
    await this.journal.close();
    await this.archive.close();
  }
}

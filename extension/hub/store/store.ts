// The hub's durable state. Three files in a private directory, one writer (the hub):
//   journal.ndjson   every bus event, appended and fdatasync'd before a send is acknowledged
//   state.json       the lowdb checkpoint: the hot (unsettled) state as of journal record n, a line per open message
//   archive.ndjson   settled messages, appended at checkpoints and looked up by offset
// Write cost does not grow with history: a send costs one batched append; a checkpoint rewrites
// only the hot document, and only after as many journal bytes as that document holds, so its
// amortised cost per send stays constant.
import { dirname, join, resolve } from 'node:path';
import { Low } from 'lowdb';
import { apply, isSettled, pruneIdempotency } from '../bus/reduce';
import {
  emptyState,
  type BusEvent,
  type BusState,
  type HotMessage,
  type Message,
  type StoredMessage,
} from '../bus/model';
import { withBody } from '../bus/body';
import { messagesTouched } from '../bus/relay';
import { AppendLog } from './appendLog';
import { CheckpointFile, type Checkpoint } from './checkpointFile';
import { reviveHot } from './revive';
import { nodeFs, type StoreFs } from './storeFs';

const FORMAT = 1;
/**
 * The journal a checkpoint waits for (or the hot document's size, if larger): a checkpoint pauses
 * the journal while it writes the hot set, so it must be rare, and the journal replayed at start
 * short.
 */
const MIN_CHECKPOINT_JOURNAL_BYTES = 4 * 1024 * 1024;
/** Zeros written ahead of the journal's lines (AppendLog): a few grows between two checkpoints. */
const JOURNAL_PREALLOCATE_BYTES = 256 * 1024;
/** fdatasyncs in flight at once: libuv's four fs threads, as many as four unbatched writers keep busy; past that, commits batch. */
const MAX_SYNCS = 4;

interface JournalRecord {
  n: number;
  e: BusEvent[];
}

/** Settled, out of the hot set: its body is written into the archive with it. */
export interface ArchivedMessage extends HotMessage {
  message: Message;
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
  /** Settled messages just moved to the archive (they leave `state.hot` without a journal event). */
  onArchived?: (archived: StoredMessage[]) => void;
  /** The hub's clock. */
  now?: () => number;
  /** fdatasyncs in flight at once; 1 writes one batch at a time (the bench compares). */
  maxSyncs?: number;
  /** The file system (the power-cut tests give one that loses what was not synced). */
  fs?: StoreFs;
}

/**
 * Creates the folder and any missing parents, and fsyncs the parent of each level it created:
 * POSIX makes a new directory's name durable only then (ext4 happens to commit it with the first
 * fdatasync inside; a filesystem that keeps no more than POSIX promises loses the whole store).
 */
async function makeDurableDir(fs: StoreFs, dir: string): Promise<void> {
  const first = await fs.mkdirs(dir, 0o700);
  if (first === undefined) return; // it was there
  const top = resolve(first);
  const created: string[] = []; // from the top level made down to `dir`
  for (let d = resolve(dir); ; d = dirname(d)) {
    created.unshift(d);
    if (d === top || d === dirname(d)) break;
  }
  for (const d of created) await fs.syncDir(dirname(d));
}

export class Store {
  readonly state: BusState;
  private n: number;
  private queue: Commit[] = [];
  /** Last journal record number written (the state holds up to `n`; the rest are in flight). */
  private written: number;
  /** Batches being written or synced (each to its own place in the journal). */
  private inflight = 0;
  /** The last batch's settling (apply, acknowledge, maybe checkpoint): batches settle in order. */
  private settled: Promise<void> = Promise.resolve();
  /** Bumped when a failed batch cuts the journal back: batches written before the cut fail too. */
  private epoch = 0;
  /** Nothing new is written: a checkpoint is due or running, or a failed batch is being cut off. */
  private paused = false;
  private lastCheckpointBytes: number;
  private closed = false;
  /** A pump is scheduled for the end of this turn (flushSoon). */
  private flushing = false;
  /** Why the journal's tail cannot be trusted (a failed cut): set, nothing is written to it until recover() succeeds. */
  private untrusted?: Error;
  private recovering?: Promise<void>;
  /** Open messages an event changed since the checkpoint document was written: the next one writes their lines anew, and copies the rest. */
  private readonly changed = new Set<string>();

  private constructor(
    readonly dir: string,
    private readonly db: Low<Checkpoint>,
    private readonly adapter: CheckpointFile,
    private readonly journalFile: AppendLog<JournalRecord>,
    private readonly archive: AppendLog<ArchivedMessage>,
    private readonly archiveIndex: Map<string, { offset: number; length: number }>,
    private readonly options: StoreOptions,
  ) {
    this.state = db.data.state;
    this.n = db.data.journalN;
    this.written = this.n;
    // Paced by the document already on disk, so a restart with a large hot set does not checkpoint it again at once.
    this.lastCheckpointBytes = adapter.bytesOnDisk;
    adapter.unchanged = (id) => !this.changed.has(id);
  }

  /** Opens (or creates) the store and recovers: checkpoint + journal records after it. */
  static async open(dir: string, node: string, options: StoreOptions): Promise<Store> {
    const fs = options.fs ?? nodeFs;
    await makeDurableDir(fs, dir);
    // Another user who owns or may write this folder could rewrite the bus's history under us.
    const st = await fs.lstat(dir);
    if (!st.isDirectory)
      throw new Error(`${dir} is not a directory (a symlink?); the store needs a real folder of its own`);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid())
      throw new Error(`${dir} belongs to uid ${st.uid}, not to you; the store must be your own folder`);
    if (st.mode & 0o022)
      throw new Error(`${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)}); run chmod 700 on it`);
    const adapter = new CheckpointFile(join(dir, 'state.json'), fs);
    const db = new Low<Checkpoint>(adapter, { format: FORMAT, journalN: 0, state: emptyState(node) });
    await db.read();
    if (db.data.format !== FORMAT)
      throw new Error(`${join(dir, 'state.json')} has format ${db.data.format}; this Handoff reads format ${FORMAT}`);
    const archive = new AppendLog<ArchivedMessage>(join(dir, 'archive.ndjson'), reviveHot, 0, fs);
    const archiveIndex = new Map<string, { offset: number; length: number }>();
    for (const line of await archive.open())
      archiveIndex.set(line.value.message.id, { offset: line.offset, length: line.length });
    const journal = new AppendLog<JournalRecord>(
      join(dir, 'journal.ndjson'),
      (r: JournalRecord) => r,
      JOURNAL_PREALLOCATE_BYTES,
      fs,
    ); // events hold no name-keyed records
    const records = await journal.open();
    const store = new Store(dir, db, adapter, journal, archive, archiveIndex, options);
    for (const { value } of records) {
      if (value.n <= store.n) continue; // already in the checkpoint
      for (const e of value.e) apply(store.state, e, store.changed);
      store.n = value.n;
    }
    store.written = store.n;
    // A crash between archiving and checkpointing leaves a message in both: the hot copy wins.
    for (const id of Object.keys(store.state.hot)) archiveIndex.delete(id);
    return store;
  }

  /** Resolves once the events are on disk and applied; rejects if they could not be written. */
  commit(events: BusEvent[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    if (this.untrusted) return this.recover().then(() => this.commit(events));
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      this.flushSoon();
    });
  }

  /**
   * Commits wait for the end of the event loop's turn, so those made in one turn share a batch:
   * the senders one batch acknowledged send again in the same turn, and take one write, not one
   * each. Measured (bench part 1, 4 senders): the main thread's cost per write, not the disk, was
   * the limit — throughput ×0.7 bare with a write per commit, about ×1 batched by turn.
   */
  private flushSoon(): void {
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      this.pump();
    });
  }

  /**
   * Group commit at the floor: every commit waiting when a batch starts shares its write and
   * fdatasync, and the next batch is written and synced (at its own offset) while earlier ones
   * still are — up to MAX_SYNCS at once, which the filesystem folds into one journal commit, the
   * way unbatched concurrent writers get theirs. A batch is applied and acknowledged only after
   * its own fdatasync (issued after its write, so it covers its bytes) and after every earlier
   * batch: acknowledgement order is journal order, and a crash can only tear what follows the
   * last acknowledged batch (AppendLog.open cuts from the first line that does not parse).
   */
  private pump(): void {
    while (!this.paused && this.inflight < (this.options.maxSyncs ?? MAX_SYNCS) && this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const first = this.written + 1;
      this.written += batch.length;
      const epoch = this.epoch;
      const start = this.journalFile.bytes;
      this.inflight++;
      const durable = (async () => {
        try {
          await this.journalFile.write(batch.map((c, i) => ({ n: first + i, e: c.events })));
          await this.journalFile.sync();
        } catch (e) {
          this.paused = true; // write nothing more until settle has cut the failed batch off
          throw e;
        } finally {
          this.inflight--;
          this.pump();
        }
      })();
      durable.catch(() => undefined); // observed in settle, in order
      const before = this.settled;
      this.settled = before.then(() => this.settle(batch, first, epoch, start, durable));
    }
  }

  private async settle(
    batch: Commit[],
    first: number,
    epoch: number,
    start: number,
    durable: Promise<void>,
  ): Promise<void> {
    let error: Error | undefined;
    try {
      await durable;
    } catch (e) {
      error = e as Error;
    }
    if (epoch !== this.epoch)
      error ??= new Error('an earlier write to the journal failed; this one was cut off with it');
    else if (error) await this.cutBack(first, start);
    if (error) {
      for (const c of batch) c.reject(error);
      return;
    }
    this.n = first + batch.length - 1;
    for (const c of batch) for (const e of c.events) apply(this.state, e, this.changed);
    for (const c of batch) c.resolve();
    if (
      this.journalFile.bytes >
      Math.max(this.options.minCheckpointBytes ?? MIN_CHECKPOINT_JOURNAL_BYTES, this.lastCheckpointBytes)
    )
      this.paused = true;
    // The checkpoint runs once the batches in flight have settled (it empties the journal).
    if (this.paused && this.written === this.n) {
      await this.checkpoint().catch((e) => this.options.onError?.('checkpoint', e));
      this.paused = false;
      this.pump();
    }
  }

  /**
   * A batch failed: it and every batch written after it are cut off the journal (none was
   * acknowledged). If the cut itself cannot be made durable, the journal's tail is not to be
   * trusted (the refused lines may be on the disk past it): nothing more is written to it until a
   * checkpoint of what was acknowledged has replaced it — a retried fsync that succeeds proves
   * nothing after a failed one.
   */
  private async cutBack(first: number, start: number): Promise<void> {
    this.epoch++;
    this.paused = true;
    while (this.inflight > 0) await new Promise((r) => setImmediate(r));
    this.written = first - 1;
    try {
      await this.journalFile.cutTo(start);
    } catch (e) {
      this.untrusted = e as Error;
      await this.recover().catch((why) => this.options.onError?.('recovery after a failed cut of the journal', why));
    }
    if (this.untrusted) for (const c of this.queue.splice(0)) c.reject(this.untrusted);
    this.paused = false;
    this.pump();
  }

  /** Replaces an untrusted journal with a checkpoint of the acknowledged state and an empty journal. */
  private recover(): Promise<void> {
    this.recovering ??= this.checkpoint()
      .then(() => void (this.untrusted = undefined))
      .finally(() => (this.recovering = undefined));
    return this.recovering;
  }

  /** Moves settled messages to the archive, rewrites the hot document, empties the journal. */
  private async checkpoint(): Promise<void> {
    const now = (this.options.now ?? Date.now)();
    const settled = Object.values(this.state.hot).filter((h) => isSettled(h, now));
    if (settled.length > 0) {
      const rows = settled
        .filter((h) => !this.archiveIndex.has(h.message.id))
        .map((h) => ({ ...h, message: withBody(h.message), archivedAt: now }));
      const places = await this.archive.writeBatch(rows);
      rows.forEach((r, i) => this.archiveIndex.set(r.message.id, places[i]));
      // A commit still queued was decided against the hot set as it stood (a receipt already
      // answered "recorded" while this checkpoint waited on the archive): the messages it changes
      // stay hot for it, or apply would drop its events, and are archived anew at a later checkpoint.
      const awaited = this.awaited();
      const moved = settled.filter((h) => !awaited.has(h.message.id));
      for (const id of awaited) this.archiveIndex.delete(id);
      for (const h of moved) delete this.state.hot[h.message.id];
      this.options.onArchived?.(moved.map((h) => h.message));
    }
    pruneIdempotency(this.state, now, this.options.idempotencyWindowMs);
    this.db.data.journalN = this.n;
    await this.db.write();
    this.changed.clear(); // the document holds every open message as it is now
    this.lastCheckpointBytes = this.adapter.bytesOnDisk;
    await this.journalFile.truncate();
  }

  /** The open messages the queued commits change. */
  private awaited(): Set<string> {
    const ids = new Set<string>();
    for (const c of this.queue)
      for (const id of messagesTouched(this.state, c.events)) if (this.state.hot[id]) ids.add(id);
    return ids;
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
    // Pumped on every turn, not left to flushSoon: its setImmediate never runs while this loop
    // awaits a settled promise, so a commit queued during close spun here at 100 % CPU forever.
    for (this.pump(); this.queue.length > 0 || this.written > this.n || this.paused; this.pump()) await this.settled;
    this.closed = true;
    await this.checkpoint().catch((e) => this.options.onError?.('checkpoint on close', e));
    await this.journalFile.close();
    await this.archive.close();
    this.adapter.close(); // the bodies left in the checkpoint cannot be read from here on
  }
}

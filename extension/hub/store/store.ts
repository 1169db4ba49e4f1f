// The hub's durable state. Files in a private directory, one writer (the hub):
//   journal.ndjson,  every bus event, appended and fdatasync'd before a send is acknowledged; two
//   journal.2.ndjson files taking turns, so a checkpoint is written while commits go on in the other
//   state.json       the lowdb checkpoint: the hot (unsettled) state as of journal record n, a line per open message
//   history/         settled messages, appended at checkpoints into segments of bounded size, each
//                    full one with an index on disk (history.ts); looked up by id, never loaded whole
// Write cost does not grow with history: a send costs one batched append; a checkpoint rewrites
// only the hot document, and only after as many journal bytes as that document holds, so its
// amortised cost per send stays constant.
import { join } from 'node:path';
import { Low } from 'lowdb';
import { apply, isSettled, pruneIdempotency, type ChangeNote } from '../bus/reduce';
import { emptyState, type BusEvent, type BusState, type HotMessage } from '../bus/model';
import { bodyOf, withBody } from '../bus/body';
import { messagesTouched } from '../bus/relay';
import { AppendLog, type LoadedLine } from './appendLog';
import { History, type ArchivedMessage } from './history';
import { Retention } from './retention';
import { CheckpointFile, type Checkpoint, type CheckpointSnapshot } from './checkpointFile';
import { MailIndex } from '../bus/mailIndex';
import { makeDurableDir, nodeFs, type StoreFs } from './storeFs';

const FORMAT = 1;
/**
 * The journal a checkpoint waits for (or the hot document's size, if larger): it rewrites the hot
 * set, so it must be rare, and the journal replayed at start short.
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

interface Commit {
  events: BusEvent[];
  resolve: () => void;
  reject: (e: Error) => void;
}

const JOURNALS = ['journal.ndjson', 'journal.2.ndjson'] as const;

export interface StoreOptions {
  idempotencyWindowMs: number;
  /** Checkpoint once the journal holds this many bytes, or the hot document's size if larger. */
  minCheckpointBytes?: number;
  /** Checkpoint at exactly this many journal bytes, not paced by the document (the bench). */
  checkpointAtBytes?: number;
  /** false: every checkpoint is a whole one, commits paused (the bench compares). */
  checkpointBehind?: boolean;
  onError?: (what: string, e: unknown) => void;
  /** A torn tail was cut off a log at open: said, though nothing acknowledged was in it. */
  onTorn?: (line: string) => void;
  /** Settled messages just moved to the archive (they leave `state.hot` without a journal event). */
  onArchived?: (archived: HotMessage[]) => void;
  /** The hub's clock. */
  now?: () => number;
  /** fdatasyncs in flight at once; 1 writes one batch at a time (the bench compares). */
  maxSyncs?: number;
  /** The file system (the power-cut tests give one that loses what was not synced). */
  fs?: StoreFs;
  /** A history segment's size before it is sealed with its index (history.ts SEGMENT_BYTES). */
  segmentBytes?: number;
  /** What retention dropped, and why it could not (retention.ts). */
  log?: (line: string, level?: 'warn' | 'error') => void;
}

export class Store {
  readonly state: BusState;
  /** What of history is kept: set once the store is open. */
  retention!: Retention;
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
  /** Messages the journal's events read or added after a start from the open index (mailIndex). */
  private restoredChanged: string[] = [];
  /** A pump is scheduled for the end of this turn (flushSoon). */
  private flushing = false;
  /** Why the journal's tail cannot be trusted (a failed cut): set, nothing is written to it until recover() succeeds. */
  private untrusted?: Error;
  private recovering?: Promise<void>;
  /** Open messages an event changed since the checkpoint document was written: the next one writes their lines anew, and copies the rest. */
  private changed = new Set<string>();
  /** Open messages that are settled or will be once their time is up (isSettled at +∞): a checkpoint looks at these only. */
  private readonly settling = new Set<string>();
  /** The hot set's ids, in the order they came: a checkpoint behind the commits walks them live (CheckpointSnapshot.ids). */
  private readonly open = new Set<string>();
  /** The journal commits go to; the other is empty, or holds records the running checkpoint covers. */
  private active = 0;
  /** A checkpoint being written while commits go on. */
  private behind?: Promise<void>;
  /** Told before an event changes an open message: the running checkpoint keeps its line first. */
  private freezing?: (id: string) => void;
  /** Told of a message that became open: the running checkpoint's document, as of its snapshot, has none. */
  private born?: (id: string) => void;
  /** Batches written and not yet settled: a checkpoint must not archive what they change. */
  private readonly flying = new Set<Commit[]>();
  /** A checkpoint is due once the batches in flight have settled. */
  private due = false;
  /** The spare journal holds records no document covers (a crash mid-checkpoint, a failed one): the next checkpoint is a whole one. */
  private wholeNext = false;
  private readonly note: ChangeNote = {
    add: (id) => {
      this.freezing?.(id);
      this.changed.add(id);
    },
  };

  private constructor(
    readonly dir: string,
    private readonly db: Low<Checkpoint>,
    private readonly adapter: CheckpointFile,
    private readonly journals: [AppendLog<JournalRecord>, AppendLog<JournalRecord>],
    readonly history: History,
    private readonly options: StoreOptions,
  ) {
    this.state = db.data.state;
    this.n = db.data.journalN;
    this.written = this.n;
    // Paced by the document already on disk, so a restart with a large hot set does not checkpoint it again at once.
    this.lastCheckpointBytes = adapter.bytesOnDisk;
    adapter.unchanged = (id) => !this.changed.has(id);
  }

  private get journalFile(): AppendLog<JournalRecord> {
    return this.journals[this.active];
  }

  private get now(): number {
    return (this.options.now ?? Date.now)();
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
    adapter.onIndexError = (e) => options.onError?.('open index', e);
    const db = new Low<Checkpoint>(adapter, { format: FORMAT, journalN: 0, state: emptyState(node) });
    await db.read();
    if (db.data.format !== FORMAT)
      throw new Error(`${join(dir, 'state.json')} has format ${db.data.format}; this Handoff reads format ${FORMAT}`);
    const torn = (path: string) => (at: number, records: number) =>
      options.onTorn?.(
        `${path}: a torn tail cut at byte ${at} (a write a crash interrupted; ${records} whole record(s) after it, never acknowledged)`,
      );
    // events hold no name-keyed records
    const journals = JOURNALS.map(
      (name) => new AppendLog<JournalRecord>(join(dir, name), (r) => r, JOURNAL_PREALLOCATE_BYTES, fs),
    ) as [AppendLog<JournalRecord>, AppendLog<JournalRecord>];
    const loaded: LoadedLine<JournalRecord>[][] = [[], []];
    let history: History | undefined;
    let retention: Retention | undefined;
    try {
      history = await History.open(dir, {
        fs,
        segmentBytes: options.segmentBytes,
        onTorn: (path, at, records) => torn(path)(at, records),
        onSealed: () => void retention?.run().catch(() => undefined), // logged by run
      });
      retention = await Retention.open(history, {
        fs,
        storeDir: dir,
        now: options.now ?? Date.now,
        log: options.log ?? (() => undefined),
      });
      for (const i of [0, 1] as const) await journals[i].open((line) => loaded[i].push(line), torn(journals[i].path));
    } catch (e) {
      await history?.close();
      for (const log of journals) await log.close();
      adapter.close();
      throw e;
    }
    const store = new Store(dir, db, adapter, journals, history, options);
    store.retention = retention;
    const after = loaded.map((records) => records.filter(({ value }) => value.n > store.n)); // the rest is in the checkpoint
    // Commits go on in the journal with the newest records; the other must be empty before it takes its turn.
    store.active = (after[1].at(-1)?.value.n ?? 0) > (after[0].at(-1)?.value.n ?? 0) ? 1 : 0;
    const spare = 1 - store.active;
    if (after[spare].length > 0) store.wholeNext = true;
    else if (loaded[spare].length > 0) await journals[spare].truncate();
    for (const { value } of [...after[0], ...after[1]].sort((a, b) => a.value.n - b.value.n)) {
      for (const e of value.e) apply(store.state, e, store.changed);
      store.n = value.n;
    }
    store.written = store.n;
    const restored = adapter.restored;
    if (restored?.index) {
      // From the open index, without reading a message; then those the journal's events read or added.
      for (const id in restored.index.places) store.open.add(id);
      for (const id of restored.index.settling) store.settling.add(id);
      store.restoredChanged = restored.lazy.stopTracking();
      for (const id of store.restoredChanged) store.follow(id);
    } else for (const id of Object.keys(store.state.hot)) store.follow(id);
    // A crash between archiving and checkpointing leaves a message in both: the hot copy wins.
    for (const id of store.open) history.forget(id);
    await retention.run().catch(() => undefined); // logged by run; a drop cut short is finished at the next start
    return store;
  }

  /** An open message's place in the open set and the settling set, as it is now. */
  private follow(id: string): void {
    const hot = this.state.hot[id];
    if (!hot) return;
    this.open.add(id);
    if (isSettled(hot, Infinity)) this.settling.add(id);
    else this.settling.delete(id);
  }

  /**
   * The mail index at start: from the checkpoint's open index (openIndex.ts) as of the checkpoint,
   * then the messages the journal's events changed or added since, followed again; or, when the
   * start parsed the document, built on the messages.
   */
  mailIndex(): MailIndex {
    const index = this.adapter.restored?.index;
    if (!index) return MailIndex.of(this.state);
    this.adapter.restored!.index = undefined; // its lists go into the mail index; the rest is in the hot set
    const mail = MailIndex.restored(index.mailEntries());
    for (const id of this.restoredChanged) mail.refresh(this.state, id);
    this.restoredChanged = [];
    return mail;
  }

  /** Open messages not parsed yet (a start from the open index leaves them in the document until read). */
  get unparsed(): number {
    return this.adapter.restored?.lazy.pending ?? 0;
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
   * each: the main thread's cost per write, not the disk, is the limit (docs/performance.md, "Group commit").
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
      const journal = this.journalFile;
      const start = journal.bytes;
      this.inflight++;
      this.flying.add(batch);
      const durable = (async () => {
        try {
          await journal.write(batch.map((c, i) => ({ n: first + i, e: c.events })));
          await journal.sync();
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
    } finally {
      this.flying.delete(batch);
    }
    if (epoch !== this.epoch)
      error ??= new Error('an earlier write to the journal failed; this one was cut off with it');
    else if (error) await this.cutBack(first, start);
    if (error) {
      for (const c of batch) c.reject(error);
      return;
    }
    this.n = first + batch.length - 1;
    for (const c of batch) {
      for (const e of c.events) apply(this.state, e, this.note);
      for (const id of messagesTouched(this.state, c.events)) {
        const hot = this.state.hot[id];
        if (hot && !this.open.has(id)) {
          this.born?.(id);
          this.open.add(id);
        }
        if (hot && isSettled(hot, Infinity)) this.settling.add(id);
        else this.settling.delete(id);
      }
    }
    for (const c of batch) c.resolve();
    if (
      !this.behind &&
      this.journalFile.bytes >
        (this.options.checkpointAtBytes ??
          Math.max(this.options.minCheckpointBytes ?? MIN_CHECKPOINT_JOURNAL_BYTES, this.lastCheckpointBytes))
    )
      this.due = true;
    // Commits wait only while the batches in flight settle: the journals then change turns, at once.
    if (this.due) this.paused = true;
    if (this.due && this.written === this.n) {
      this.due = false;
      if (this.wholeNext || this.options.checkpointBehind === false)
        await this.checkpoint().catch((e) => this.options.onError?.('checkpoint', e));
      else this.checkpointBehind();
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
    this.recovering ??= (this.behind ?? Promise.resolve())
      .then(() => this.checkpoint())
      .then(() => void (this.untrusted = undefined))
      .finally(() => (this.recovering = undefined));
    return this.recovering;
  }

  /** Open messages settled by now. */
  private settledNow(now: number): HotMessage[] {
    const out: HotMessage[] = [];
    for (const id of this.settling) {
      const hot = this.state.hot[id];
      if (hot && isSettled(hot, now)) out.push(hot);
    }
    return out;
  }

  /**
   * A checkpoint written behind the commits. Here, at once, with no batch in flight: the document
   * as of record n is snapshot, commits go on in the other journal, and the next event to change
   * an open message not yet written keeps that message's line as it was. Then settled messages go
   * to the archive, the document is written, and the journal it covers is emptied for its next turn.
   * If any of that fails, the journal it covers holds records no document does: the next
   * checkpoint is a whole one.
   */
  private checkpointBehind(): void {
    const now = this.now;
    pruneIdempotency(this.state, now, this.options.idempotencyWindowMs);
    const settled = this.settledNow(now);
    this.db.data.journalN = this.n;
    const before = this.changed;
    const snapshot = this.adapter.snapshot(this.db.data, (id) => !before.has(id), this.open);
    this.changed = new Set();
    const touched = new Set<string>();
    this.freezing = (id) => {
      touched.add(id);
      const hot = this.state.hot[id];
      if (hot) this.adapter.freeze(snapshot, id, hot);
    };
    this.born = (id) => snapshot.born.add(id);
    const covered = this.active;
    this.active = 1 - covered;
    this.behind = this.writeBehind(snapshot, settled, touched, covered, now)
      .catch((e) => {
        for (const id of before) this.changed.add(id); // still changed from the document on disk
        this.wholeNext = true;
        this.options.onError?.('checkpoint', e);
      })
      .finally(() => {
        this.freezing = undefined;
        this.born = undefined;
        this.behind = undefined;
      });
  }

  private async writeBehind(
    snapshot: CheckpointSnapshot,
    settled: HotMessage[],
    touched: Set<string>,
    covered: number,
    now: number,
  ): Promise<void> {
    const moved = await this.archiveSettled(settled, now, touched);
    await this.adapter.writeSnapshot(snapshot, this.state.hot, new Set(moved.map((h) => h.message.id)), true);
    this.lastCheckpointBytes = this.adapter.bytesOnDisk;
    await this.journals[covered].truncate();
  }

  /**
   * Writes settled messages to the archive and takes them out of the hot set, except those an
   * event changed meanwhile (`touched`) or a commit not yet applied changes: they stay hot (apply
   * would drop their events) and are archived anew at a later checkpoint.
   */
  private async archiveSettled(settled: HotMessage[], now: number, touched?: Set<string>): Promise<HotMessage[]> {
    if (settled.length === 0) return [];
    const rows = settled
      .filter((h) => !this.history.holds(h.message.id))
      .map((h) => ({ ...h, message: withBody(h.message), archivedAt: now }));
    const texts = new Map(rows.map((r) => [r.message.id, r.message.body]));
    await this.history.append(rows);
    const awaited = this.awaited();
    const stays = (id: string) => awaited.has(id) || !!touched?.has(id);
    const moved = settled.filter((h) => !stays(h.message.id));
    for (const h of settled) if (stays(h.message.id)) this.history.forget(h.message.id);
    for (const h of moved) {
      // Its body's ref points into a document that is about to be replaced, and the message may
      // still be held elsewhere (the settled window, hub/requests/settledWindow.ts): it keeps its text.
      h.message.body = texts.get(h.message.id) ?? bodyOf(h.message);
      delete this.state.hot[h.message.id];
      this.settling.delete(h.message.id);
      this.open.delete(h.message.id);
    }
    this.options.onArchived?.(moved);
    return moved;
  }

  /** A whole checkpoint, with commits paused: archive, document, both journals emptied. */
  private async checkpoint(): Promise<void> {
    const now = this.now;
    await this.archiveSettled(this.settledNow(now), now);
    pruneIdempotency(this.state, now, this.options.idempotencyWindowMs);
    this.db.data.journalN = this.n;
    await this.db.write();
    this.changed.clear(); // the document holds every open message as it is now
    this.lastCheckpointBytes = this.adapter.bytesOnDisk;
    await this.journals[1 - this.active].truncate();
    await this.journalFile.truncate();
    this.wholeNext = false;
  }

  /**
   * The open messages that commits decided but not yet applied change (a receipt answered
   * "recorded" while a checkpoint waited on the archive): queued, or written and not settled.
   */
  private awaited(): Set<string> {
    const ids = new Set<string>();
    for (const batch of [this.queue, ...this.flying])
      for (const c of batch)
        for (const id of messagesTouched(this.state, c.events)) if (this.state.hot[id]) ids.add(id);
    return ids;
  }

  /** Archived recently (history.ts knowsRecent): told without a read, for duplicates. */
  isRecentlyArchived(id: string): boolean {
    return this.history.knowsRecent(id);
  }

  /** Archived, however long ago: a read of the index whose id range holds it. */
  isArchived(id: string): Promise<boolean> {
    return Promise.resolve(this.history.has(id));
  }

  archived(id: string): Promise<ArchivedMessage | undefined> {
    return this.history.get(id);
  }

  /** The open messages' ids in the order they came, a live view: ids added later are visited too. */
  openIds(): Iterable<string> {
    return this.open;
  }

  get openCount(): number {
    return this.open.size;
  }

  get archivedCount(): number {
    return this.history.count;
  }

  /** Finishes pending writes and checkpoints, so the next start replays nothing. */
  async close(): Promise<void> {
    // Pumped on every turn, not left to flushSoon: its setImmediate never runs while this loop
    // awaits a settled promise, so a commit queued during close would spin here.
    for (;;) {
      for (this.pump(); this.queue.length > 0 || this.written > this.n || this.paused; this.pump()) await this.settled;
      if (!this.behind) break;
      await this.behind;
    }
    this.closed = true;
    await this.checkpoint().catch((e) => this.options.onError?.('checkpoint on close', e));
    for (const journal of this.journals) await journal.close();
    await this.retention.close();
    await this.history.close();
    this.adapter.close(); // the bodies left in the checkpoint cannot be read from here on
  }
}

// The hub's one commit path: the store, the indexes that follow the journal (open mail, due
// times), message ids and seqs in journal order, and who hears about each change. A store that
// cannot be opened leaves the hub serving: every write then says why.
import { BusError } from '../bus/errors';
import { emptyState, type BusEvent, type BusState, type HotMessage } from '../bus/model';
import { DueIndex } from '../bus/dueIndex';
import { LedgerIndex } from '../bus/ledgerIndex';
import { Backfill } from './backfill';
import { MailIndex } from '../bus/mailIndex';
import { answeredEscalations } from '../bus/escalate';
import { messagesTouched, outboxFor } from '../bus/relay';
import type { Snapshot } from '../../protocol/views';
import { messageIds } from './messageIds';
import { SettledWindow } from '../requests/settledWindow';
import { Store } from '../store/store';
import type { ArchivedMessage } from '../store/history';
import type { HistoryQuery } from '../bus/historyQuery';
import type { History } from '../store/history';
import type { Retention } from '../store/retention';
import { StoreDamage } from '../store/storeDamage';
import type { StoreFs } from '../store/storeFs';
import type { Log } from '../../protocol/hubLog';

export interface JournalOptions {
  dir: string;
  node: string;
  idempotencyWindowMs: number;
  maxSyncs?: number;
  /** Checkpoint once the journal holds this many bytes (default: the store's). */
  minCheckpointBytes?: number;
  checkpointAtBytes?: number;
  checkpointBehind?: boolean;
  fs?: StoreFs;
  segmentBytes?: number;
  log: Log;
  now: () => number;
}

function storeFailure(dir: string, e: unknown): BusError {
  const err = e as NodeJS.ErrnoException;
  // Node's fs messages already start with the code ("ENOSPC: no space left…"); others may not.
  const why = err.code && !err.message.startsWith(err.code) ? `${err.code}: ${err.message}` : err.message;
  return new BusError(
    'store_unavailable',
    `The hub could not write its store in ${dir} (${why}). Nothing was sent or recorded. Free disk space or fix the folder's permissions, then retry; the hub keeps running.`,
  );
}

/** What a write meets once the hub has begun to stop: the store closing is no disk fault. */
function shuttingDown(): BusError {
  return new BusError(
    'shutting_down',
    'The hub is shutting down, so nothing was sent or recorded. Retry in a moment: the next hub will take it.',
  );
}

export class Journal {
  private store?: Store;
  private error?: string;
  /** close() has begun: a write refused or failed from here on is the shutdown's doing. */
  private closing = false;
  private readonly ulid = messageIds();
  private seq = 0;
  mail = new MailIndex();
  /**
   * Not built at start: the timer's first tick needs the due times, the editor's first snapshot the
   * ledger, an agent's first answer neither. Once the store is open the due times follow the
   * journal, and a backfill puts in the messages that were open, a slice per turn (backfill.ts);
   * a tick before it is through finishes it. The ledger is built whole on first use: only an
   * editor asks for it (at once, as its window opens), and a headless hub would hold it for nobody
   * (its memory: docs/performance.md).
   */
  private dueIndex?: DueIndex;
  private ledgerIndex?: LedgerIndex;
  private dueFill?: Backfill;
  /** Messages sent since the due times' backfill began: already on its heap. */
  private dueBorn?: Set<string>;
  private readonly listeners = new Set<(ids: readonly string[]) => void>();
  /** The handoffs settled last, for the editor: read from history's tail on its first snapshot. */
  readonly settled = new SettledWindow(async (n) => (this.store ? this.store.history.newest(n) : []));

  constructor(private readonly options: JournalOptions) {}

  get due(): DueIndex {
    this.dueFill?.finish();
    return (this.dueIndex ??= DueIndex.of(this.state));
  }

  /** The summary the editor's views read: counts, overdue, the capped lists' order. */
  get ledger(): LedgerIndex {
    return (this.ledgerIndex ??= LedgerIndex.of(this.state));
  }

  /** What is left to fill in after start: the timer's due times. */
  get backfills(): Backfill[] {
    return this.dueFill && !this.dueFill.complete ? [this.dueFill] : [];
  }

  /** The open messages' ids, a live view: those added later are visited too. */
  openIds(): Iterable<string> {
    return this.store?.openIds() ?? Object.keys(this.state.hot);
  }

  async open(): Promise<void> {
    try {
      this.store = await Store.open(this.options.dir, this.options.node, {
        idempotencyWindowMs: this.options.idempotencyWindowMs,
        maxSyncs: this.options.maxSyncs,
        minCheckpointBytes: this.options.minCheckpointBytes,
        checkpointAtBytes: this.options.checkpointAtBytes,
        checkpointBehind: this.options.checkpointBehind,
        fs: this.options.fs,
        segmentBytes: this.options.segmentBytes,
        now: this.options.now,
        onError: (what, e) => this.options.log(`store ${what} failed: ${(e as Error).message}`, 'error'),
        onTorn: (line) => this.options.log(line, 'warn'),
        log: this.options.log,
        onArchived: (archived) => this.archived(archived),
      });
      this.seq = this.store.state.seq;
      this.mail = this.store.mailIndex();
      // Any built before (on the empty state of a store not open yet) are filled in anew.
      const state = this.store.state;
      const due = (this.dueIndex = new DueIndex());
      const born = (this.dueBorn = new Set());
      this.dueFill = new Backfill(
        this.store.openIds(),
        (id) => {
          const hot = state.hot[id];
          if (hot && !born.has(id)) due.add(hot);
        },
        (id, e) => this.options.log(`the due times leave out ${id}: ${e.message}`, 'error'),
      );
      this.ledgerIndex = undefined;
      const unparsed =
        this.store.unparsed > 0 ? ` (${this.store.unparsed} read from the open index, parsed when first read)` : '';
      this.options.log(
        `store ${this.options.dir}: ${this.store.openCount} open${unparsed}, ${this.store.archivedCount} archived`,
      );
    } catch (e) {
      // Damage is the person's to decide on (StoreDamage says how); the hub serves, every write refused.
      this.error = e instanceof StoreDamage ? e.message : storeFailure(this.options.dir, e).message;
      this.options.log(this.error, 'error');
    }
  }

  close(): Promise<void> | undefined {
    this.closing = true;
    return this.store?.close();
  }

  get state(): BusState {
    return this.store?.state ?? emptyState(this.options.node);
  }

  get isOpen(): boolean {
    return !!this.store;
  }

  /** Open messages a start from the checkpoint's open index has not parsed yet (store/lazyHot.ts). */
  get unparsed(): number {
    return this.store?.unparsed ?? 0;
  }

  get status(): Snapshot['store'] {
    return { ok: !!this.store, dir: this.options.dir, error: this.error, archived: this.store?.archivedCount ?? 0 };
  }

  /** Throws the store's failure, so nothing is decided that cannot be recorded. */
  writable(): void {
    if (this.closing) throw shuttingDown();
    if (!this.store) throw new BusError('store_unavailable', this.error ?? 'The store is not open.');
  }

  newId(now: number): string {
    return this.ulid(now);
  }

  nextSeq(): number {
    return ++this.seq;
  }

  /** Archived in the recent window (store/history.ts): told at once, for duplicates. */
  isRecentlyArchived(id: string): boolean {
    return !!this.store?.isRecentlyArchived(id);
  }

  /** Archived, however long ago (a read of a history index). */
  async isArchived(id: string): Promise<boolean> {
    return !!(await this.store?.isArchived(id));
  }

  /** Settled messages (store/history.ts), once the store is open. */
  get history(): History | undefined {
    return this.store?.history;
  }

  /** The store's retention (store/retention.ts), once it is open. */
  get retention(): Retention | undefined {
    return this.store?.retention;
  }

  /** Settled messages that answer the query, newest first (store/history.ts). */
  async searchArchived(q: HistoryQuery): Promise<ArchivedMessage[]> {
    return this.store ? this.store.history.search(q) : [];
  }

  /** An open message, or an archived one read back from the archive. */
  async find(id: string): Promise<HotMessage | undefined> {
    return this.state.hot[id] ?? (await this.store?.archived(id));
  }

  /** Every journal write goes through here. */
  async commit(events: BusEvent[]): Promise<void> {
    this.writable();
    const store = this.store!;
    // What the bus derives from these events rides in the same journal record: escalations the
    // answer made moot, then the outbox entries for other nodes.
    const moot = answeredEscalations(this.state, events);
    const all = moot.length > 0 ? [...events, ...moot] : events;
    const touched = messagesTouched(this.state, all);
    const outbox = outboxFor(this.state, all);
    try {
      await store.commit(outbox.length > 0 ? [...all, ...outbox] : all);
    } catch (e) {
      throw this.closing ? shuttingDown() : storeFailure(store.dir, e);
    }
    this.mail.note(this.state, all);
    this.dueIndex?.note(this.state, all);
    if (this.dueBorn) {
      if (this.dueFill?.complete) {
        this.dueBorn.clear(); // the backfill's closure holds it too
        this.dueBorn = undefined;
      } else for (const e of all) if (e.type === 'sent') this.dueBorn.add(e.message.id);
    }
    this.ledgerIndex?.note(this.state, touched);
    this.changed(touched);
  }

  /** Settled messages left the hot set at a checkpoint, with no journal event: the indexes follow too. */
  private archived(moved: HotMessage[]): void {
    const archived = moved.map((h) => h.message);
    this.mail.forget(archived);
    this.ledgerIndex?.forget(archived);
    this.settled.archived(moved);
    this.changed(archived.map((m) => m.id));
  }

  /** Called after every change with the ids of the messages it touched (none for sessions, links, names). */
  onChanged(listener: (ids: readonly string[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed(ids: readonly string[] = []): void {
    for (const l of this.listeners) l(ids);
  }
}

// The hub: the bus state behind its journal, the live sessions, and the pushes. Transports (MCP
// sockets, the editor's control connection, Matrix) call these methods; the bus (bus/) decides,
// the journal commits what was decided through its one commit path, then the pushes go out. Each
// job has its own file (journal, roster, sending, pushes, timer, snapshot); this wires them.
import { hostname } from 'node:os';
import { basename } from 'node:path';
import {
  decideChase,
  decideReceipt,
  decideResolve,
  DEFAULT_LIMITS,
  type Caller,
  type Limits,
  type SendDraft,
} from './bus/decide';
import { coverage, pendingLedger } from './bus/ledger';
import { isUnread } from './bus/deliveryState';
import { withBody } from './bus/body';
import type { BusEvent, BusState, HotMessage, Outcome, ReceiptKind } from './bus/model';
import type { UnackedSummary } from './bus/mailIndex';
import { Attention } from './deliver/attention';
import { Journal, type JournalOptions } from './state/journal';
import type {
  Coverage,
  InboxItem,
  LedgerEntry,
  MessageView,
  ReceiptAnswer,
  ExportPage,
  RetentionView,
  SearchHit,
  SendResult,
  Snapshot,
  SnapshotChange,
} from '../protocol/views';
import { People } from './presence/people';
import { commandOf } from '../shared/proc';
import { Pushes } from './deliver/pushes';
import { lookup, messageFor } from './requests/reading';
import { searchHistory } from './requests/searching';
import { exportPage, type ExportQuery } from './requests/exporting';
import type { HistoryQuery } from './bus/historyQuery';
import type { RetentionPolicy } from '../protocol/controlSchemas';
import type { RemoteLink } from './remote';
import { LocalLinks } from './link/localLinks';
import { Roster } from './presence/roster';
import { Sending } from './requests/sending';
import { SessionRegistry, type Session } from './presence/sessions';
import { changeOf, peopleViews, snapshotOf, type SnapshotInput } from './requests/snapshot';
import { DueTimer } from './deliver/timer';
import { Waking, type Pane } from './deliver/waking';
import { EditorTerminals } from './deliver/wake/editor';
import { fillInTurns } from './state/backfill';
import { QuietMarks } from './deliver/quietMarks';
import { inPrivateDir } from '../shared/discovery';
import { powers, weakerGuarantees } from '../shared/platform/powers';
import type { Log } from '../protocol/hubLog';

export interface HubOptions {
  workspace: string;
  storeDir: string;
  /** The socket the hub listens on: its quiet marks are kept next to it (shared/quiet.ts). */
  socket?: string;
  node?: string;
  limits?: Partial<Limits>;
  /** Unacked messages replayed on attach; past this a truncation notice says how many more. */
  replayLimit?: number;
  /** How often the SLA/TTL timer runs; 0 runs it only when tick() is called (fake-clock tests). */
  tickMs?: number;
  log?: Log;
  /** How long a send to remote recipients waits for the homeserver before answering. */
  relayWaitMs?: number;
  /** The hub's clock; tests pass a fake one. */
  clock?: () => number;
  /** The store's fdatasyncs in flight at once (default 4; the bench compares 1). */
  maxSyncs?: number;
  /** The store's file system and checkpoint pace, for the power-cut tests. */
  store?: Pick<JournalOptions, 'fs' | 'minCheckpointBytes' | 'checkpointAtBytes' | 'checkpointBehind' | 'segmentBytes'>;
  /** How wakes reach an idle agent's terminal (tmux by default); tests count what is typed. */
  pane?: Pane;
  /** How long a wake waits after someone typed in the agent's tmux session (10 s by default). */
  wakeQuietMs?: number;
  /** The extension host of the editor window that started this hub (its pid), if one did. */
  editorHost?: number;
}

export class Hub {
  readonly node: string;
  readonly sessions = new SessionRegistry();
  /** The people at editor windows on this hub (in memory, like sessions). */
  readonly people = new People();
  /** Those windows as the hub asks them to wake an agent in one of their integrated terminals. */
  readonly editorTerminals = new EditorTerminals();
  readonly limits: Limits;
  readonly now: () => number;
  readonly journal: Journal;
  readonly attention: Attention;
  readonly waking: Waking;
  readonly pushes: Pushes;
  readonly roster: Roster;
  private readonly sending: Sending;
  private readonly timer: DueTimer;
  private interval?: NodeJS.Timeout;
  private readonly log: Log;
  private remoteLink?: RemoteLink;
  /** The repositories on this machine the user linked to this one (link/). */
  readonly links: LocalLinks;

  constructor(readonly options: HubOptions) {
    this.node = options.node ?? `${hostname()}:${basename(options.workspace)}`;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    const log = (this.log = options.log ?? (() => undefined));
    const now = (this.now = options.clock ?? Date.now);
    const journal = (this.journal = new Journal({
      dir: options.storeDir,
      node: this.node,
      idempotencyWindowMs: this.limits.idempotencyWindowMs,
      maxSyncs: options.maxSyncs,
      ...options.store,
      log,
      now,
    }));
    const commit = (events: BusEvent[]) => journal.commit(events);
    const links = (this.links = new LocalLinks(this, log));
    const { sessions, people, node } = this;
    const waking = (this.waking = new Waking({
      unsurfaced: (identity, session) => journal.mail.unsurfaced(journal.state, identity, session, new Set(), 5).items,
      commit,
      mode: () => people.wakeMode(),
      askPerson: (q) => this.editorTerminals.askPerson(people.lastFocusedWindow(), q),
      node,
      now,
      log,
      pane: options.pane,
      editor: this.editorTerminals,
      quietMs: options.wakeQuietMs,
    }));
    const attention = (this.attention = new Attention({
      page: (identity, ids) => journal.mail.openAmong(journal.state, identity, ids),
      unsurfaced: (identity, session, claimed, limit) =>
        journal.mail.unsurfaced(journal.state, identity, session, claimed, limit),
      agentSessionOf: (identity, cliSession) => journal.mail.agentSessionOf(identity, cliSession),
      seenIn: (identity, session) => journal.mail.seenInSession(identity, session),
      commit,
      sessions,
      waking,
      node,
      log,
      now,
    }));
    const pushes = (this.pushes = new Pushes({
      node,
      sessions,
      now,
      commit,
      log,
      unackedOf: (identity) => journal.mail.unackedFor(journal.state, identity),
      hotOf: (id) => journal.state.hot[id],
      isOpen: (id) => !!journal.state.hot[id],
      replayLimit: options.replayLimit ?? 50,
      arrived: (ids) => attention.arrived(ids),
    }));
    // The window that started this hub named its extension host (--clientProcessId); the others say theirs.
    const launcher = options.editorHost;
    const extensionHosts = () => {
      const hosts = people.extensionHosts();
      if (launcher) hosts.add(launcher);
      return hosts;
    };
    this.roster = new Roster({ journal, sessions, people, pushes, now, log, extensionHosts, commandOf });
    this.sending = new Sending({
      journal,
      sessions,
      pushes,
      attention,
      limits: this.limits,
      now,
      link: () => this.remoteLink,
      links,
      relayWaitMs: options.relayWaitMs ?? 3000,
      isPerson: (identity) => people.identities().includes(identity),
    });
    this.timer = new DueTimer({ journal, pushes, people, node, now, log });
  }

  private markStarted!: () => void;
  private quiet?: QuietMarks;
  /** The indexes being filled in after start (backfill.ts). */
  private filling?: { stop: () => void; done: Promise<void> };

  /** Resolves once the indexes left out of start are filled in (or the hub closed first). */
  get backfilled(): Promise<void> {
    return this.filling?.done ?? this.started.then(() => this.filling?.done);
  }
  /** Resolves once start() has opened (or failed to open) the store. */
  readonly started = new Promise<void>((resolve) => (this.markStarted = resolve));

  /** Opens the store. If it cannot be opened the hub still serves and every write says why. */
  async start(): Promise<void> {
    await this.journal.open();
    this.links.start();
    // Next to a socket in a folder only we may write: hooks trust what they find there.
    const socket = this.options.socket;
    if (socket && powers.socketFiles && inPrivateDir(socket)) this.keepQuietMarks(socket);
    // The duplicate window first (a send needs it), then the timer's due times.
    const skipped = (id: string, e: Error) => this.log(`the duplicate window leaves out ${id}: ${e.message}`, 'error');
    this.filling = fillInTurns([this.sending.seed(skipped), ...this.journal.backfills]);
    const tickMs = this.options.tickMs ?? 1000;
    if (tickMs > 0) {
      this.interval = setInterval(() => void this.tick(), tickMs);
      this.interval.unref();
    }
    this.markStarted();
  }

  /**
   * Unmarks an identity in the commit that gives it a handoff (onChanged runs in the commit, before
   * it is acknowledged), and marks it in a commit that leaves it with nothing waiting. None is
   * marked at start: an identity with no such commit since is marked when a hook of its is
   * answered with nothing.
   */
  private keepQuietMarks(socket: string): void {
    try {
      const marks = (this.quiet = new QuietMarks(socket, this.log));
      this.journal.onChanged((ids) => {
        const who = new Set<string>();
        for (const id of ids) for (const r in this.state.hot[id]?.deliveries ?? {}) who.add(r);
        for (const r of who) marks.update(r, this.journal.mail.hasWaiting(r));
      });
    } catch (e) {
      this.log(`no quiet marks next to ${socket} (${(e as Error).message}): every hook asks the hub`, 'warn');
    }
  }

  /** A hook of the identity was answered with nothing: from now on its tool-call hooks need not ask. */
  answeredQuiet(identity: string): void {
    this.quiet?.update(identity, this.journal.mail.hasWaiting(identity));
  }

  async close(): Promise<void> {
    this.quiet?.close();
    clearInterval(this.interval);
    this.filling?.stop();
    this.waking.close();
    this.links.close();
    await this.remoteLink
      ?.close()
      .catch((e) => this.log(`closing the link to other nodes: ${(e as Error).message}`, 'warn'));
    for (const s of this.sessions.all()) s.close('the hub is stopping');
    await this.journal.close();
  }

  get state(): BusState {
    return this.journal.state;
  }

  /** Called after every change with the ids of the messages it touched (none for sessions, links, names). */
  onChanged(listener: (ids: readonly string[]) => void): () => void {
    return this.journal.onChanged(listener);
  }

  // ---- who is here (roster.ts) ----

  remember(identity: string, roles?: string[]): Promise<void> {
    return this.roster.remember(identity, roles);
  }
  async attach(session: Session): Promise<void> {
    await this.roster.attach(session);
    this.attention.attached(session);
  }
  detach(session: Session): void {
    this.roster.detach(session);
    if (!this.sessions.get(session.key)) this.attention.detached(session.key);
  }

  /**
   * Handoffs a Handoff tool result just showed the caller's model: surfaced once per session.
   * Best effort: a store that cannot be written must not keep an agent from reading its mail.
   */
  async surfacedInTool(caller: Caller, ids: string[], tool: string): Promise<void> {
    if (ids.length === 0 || !this.journal.isOpen) return;
    await this.attention
      .surfaceInTool(caller.identity, caller.session, `tool ${tool}`, new Set(ids))
      .catch((e) =>
        this.log(
          `could not record that ${tool} showed ${caller.identity} ${ids.length} handoffs: ${(e as Error).message}`,
        ),
      );
  }

  // ---- sending (sending.ts) and receipts ----

  send(caller: Caller, req: SendDraft): Promise<SendResult> {
    return this.sending.send(caller, req);
  }

  async receipt(
    caller: Caller,
    id: string,
    kind: ReceiptKind,
    outcome?: Outcome,
    summary?: string,
  ): Promise<ReceiptAnswer> {
    this.journal.writable();
    const decision = decideReceipt(
      this.state.hot[id],
      !this.state.hot[id] && (await this.journal.isArchived(id)),
      id,
      kind,
      caller,
      this.now(),
      outcome,
      summary,
    );
    if (decision.kind === 'settled') return { message_id: id, state: 'settled', recorded: false };
    if (decision.kind === 'repeat') return { message_id: id, state: decision.state, recorded: false };
    await this.journal.commit([decision.event]);
    return {
      message_id: id,
      state: this.state.hot[id]?.deliveries[caller.identity]?.state ?? 'settled',
      recorded: true,
    };
  }

  // ---- other nodes ----

  /** Attaches (or, with undefined, detaches) the transport to other nodes. */
  setLink(link: RemoteLink | undefined): void {
    this.remoteLink = link;
    this.journal.changed();
  }

  /** The link's connection state changed (no journal event says so): the views must hear it. */
  linkChanged(): void {
    this.journal.changed();
  }

  get link(): RemoteLink | undefined {
    return this.remoteLink;
  }

  /**
   * Whether a message id is known here, open or archived in the recent window: ingest is
   * idempotent by it. A homeserver replays a room's recent timeline, not years of it.
   */
  knows(id: string): boolean {
    return !!this.state.hot[id] || this.journal.isRecentlyArchived(id);
  }

  /**
   * Events from the transport to other nodes (ingested messages and receipts, outbox progress),
   * committed in one journal record (with the sync position, so a crash replays all or none of
   * them); each new message then reaches its local recipients exactly like a local send.
   */
  async applyRemote(events: BusEvent[]): Promise<void> {
    // A message from another node takes its place in this hub's order (seq) on arrival.
    await this.pushes.admit(
      events.map((e) => (e.type === 'sent' ? { ...e, message: { ...e.message, seq: this.journal.nextSeq() } } : e)),
    );
  }

  // ---- reading ----

  /**
   * Open and settled handoffs that answer the query, newest first. `viewer`: only what that
   * identity may read (bus/mayRead.ts: the mail it sent or was a recipient of).
   */
  search(q: Omit<HistoryQuery, 'viewer'>, viewer?: string): Promise<SearchHit[]> {
    return searchHistory(this.journal, { ...q, viewer: viewer === undefined ? undefined : { identity: viewer } });
  }

  /** A page of history and, if asked, the open handoffs, for keeping elsewhere (exporting.ts). */
  export(q: Omit<ExportQuery, 'viewer'>, viewer?: string): Promise<ExportPage> {
    this.journal.writable();
    return exportPage(this.journal, { ...q, viewer: viewer === undefined ? undefined : { identity: viewer } });
  }

  /** The store's retention (store/retention.ts); `set` replaces it, durably, and runs it at once. */
  async retention(set?: RetentionPolicy): Promise<RetentionView> {
    this.journal.writable();
    const retention = this.journal.retention!;
    if (set) await retention.set(set);
    return retention.view();
  }

  lookup(id: string): Promise<MessageView | undefined> {
    return lookup(this.journal, id);
  }

  /** A message as seen by one identity: only its sender and recipients may read it. */
  messageFor(identity: string, id: string): Promise<MessageView> {
    return messageFor(this.journal, identity, id);
  }

  /** Open mail of an identity (not yet done, stuck or failed), oldest first; `afterSeq` pages on from the last seq seen. */
  inbox(identity: string, opts: { unreadOnly?: boolean; limit?: number; afterSeq?: number } = {}): InboxItem[] {
    const keep = opts.unreadOnly ? (hot: HotMessage) => isUnread(hot.deliveries[identity]) : undefined;
    return this.journal.mail
      .openFor(this.state, identity, { afterSeq: opts.afterSeq, limit: opts.limit ?? 20, keep })
      .map((hot) => ({ message: withBody(hot.message), delivery: hot.deliveries[identity] }));
  }

  /** How many open handoffs the identity has not read. */
  unread(identity: string): number {
    return this.journal.mail.unreadCount(identity);
  }

  /** How many handoffs wait for the identity's ACK and the oldest few: the footer on every tool result. */
  unacked(identity: string, oldest = 5): UnackedSummary {
    return this.journal.mail.unackedSummary(this.state, identity, oldest);
  }

  pending(identity?: string): LedgerEntry[] {
    const hot = this.state.hot;
    const open =
      identity === undefined ? Object.values(hot) : this.journal.ledger.pendingFrom(identity).map((id) => hot[id]);
    return pendingLedger(open, this.now());
  }

  coverage(): Coverage[] {
    return coverage(
      this.state,
      (identity) => this.sessions.count(identity),
      this.now(),
      (identity) => this.people.presence(identity, this.now()),
      (identity) => this.journal.ledger.unacked(identity),
    );
  }

  // ---- people's actions (editor, CLI) ----

  /** Pushes again, flagged as a chase, to every live session of each unacked recipient. */
  async chase(id: string, by: string): Promise<{ pushed: number }> {
    this.journal.writable();
    const events = decideChase(this.state.hot[id], id, this.now());
    // Recorded, then pushed, as the timer's chases: a chase the store refused went nowhere.
    if (events.length) await this.journal.commit(events);
    const pushed = this.pushes.chased(events);
    this.log(`${by} chased ${id}: pushed to ${pushed} sessions`);
    return { pushed };
  }

  async resolve(id: string, by: string, note?: string): Promise<void> {
    await this.journal.commit([decideResolve(this.state.hot[id], id, by, this.now(), note)]);
  }

  // ---- views (snapshot.ts) and the timer (timer.ts) ----

  snapshot(): Snapshot {
    return snapshotOf(this.snapshotInput());
  }

  /** What an editor asks for: the snapshot with the handoffs settled last, read from history's tail the first time. */
  async fullSnapshot(): Promise<Snapshot> {
    try {
      await this.journal.settled.load();
    } catch (e) {
      this.log(`the settled handoffs were not read from history: ${(e as Error).message}`, 'error');
    }
    return this.snapshot();
  }

  /** The rows of the given messages (open ones upserted, the rest removed) and the summary, for change notifications. */
  changeOf(ids: Iterable<string>, since: number): SnapshotChange {
    return changeOf(this.snapshotInput(), ids, since);
  }

  private snapshotInput(): SnapshotInput {
    const now = this.now();
    return {
      node: this.node,
      workspace: this.options.workspace,
      now,
      state: this.state,
      ledger: this.journal.ledger,
      settled: this.journal.settled.list(),
      sessions: this.sessions,
      link: this.remoteLink,
      links: this.links.view(),
      store: this.journal.status,
      people: peopleViews(this.people, this.journal.mail, this.state, now),
      person: (identity) => this.people.presence(identity, now),
      wakeIdleAgents: this.people.wakeMode(),
      weaker: weakerGuarantees(powers),
    };
  }

  /** Chases, escalates, dead-letters what fell due. Public so fake-clock tests can drive it. */
  tick(): Promise<void> {
    return this.timer.run();
  }
}

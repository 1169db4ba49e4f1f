// The hub: the bus state behind a store, the live sessions, and the pushes. Transports (MCP
// sockets, the editor's control connection, Matrix) call these methods; the bus (bus/) decides,
// the hub commits what was decided through its one commit path, then pushes. Its clock is injected.
import { hostname } from 'node:os';
import { basename } from 'node:path';
import { monotonicFactory } from 'ulid';
import { checkMessageId, decideChase, decideReceipt, decideResolve, decideSend, DEFAULT_LIMITS, type Caller, type Limits, type SendDraft } from './bus/decide';
import { BusError } from './bus/errors';
import { caseTwin, caseTwinMessage } from './bus/identity';
import { coverage, isUnread, pendingLedger, PERSON_INBOX, personInbox, sendResult, sessionsReached } from './bus/ledger';
import { emptyState, type BusEvent, type BusState, type HotMessage, type Outcome, type ReceiptKind } from './bus/model';
import { LedgerIndex } from './bus/ledgerIndex';
import { MailIndex, type UnackedSummary } from './bus/mailIndex';
import { DueIndex } from './bus/dueIndex';
import { isRemote, messagesTouched, outboxFor } from './bus/relay';
import { Attention } from './attention';
import type { Coverage, InboxItem, LedgerEntry, MessageView, PersonView, ReceiptAnswer, RecipientOutcome, RelayOutcome, SendResult, Snapshot, SnapshotChange } from '../protocol/views';
import { People, type WindowReport } from './people';
import { Pushes } from './pushes';
import type { RemoteLink } from './remote';
import { asDuplicate, SendMemory } from './sendMemory';
import { SessionRegistry, type Session } from './sessions';
import { changeOf, snapshotOf, type SnapshotInput } from './snapshot';
import { Store } from './store/store';

export interface HubOptions {
  workspace: string;
  storeDir: string;
  node?: string;
  limits?: Partial<Limits>;
  /** Unacked messages replayed on attach; past this a truncation notice says how many more. */
  replayLimit?: number;
  /** How often the SLA/TTL timer runs; 0 runs it only when tick() is called (fake-clock tests). */
  tickMs?: number;
  log?: (line: string) => void;
  /** How long a send to remote recipients waits for the homeserver before answering. */
  relayWaitMs?: number;
  /** The hub's clock; tests pass a fake one. */
  clock?: () => number;
  /** The store's fdatasyncs in flight at once (default 4; the bench compares 1). */
  maxSyncs?: number;
}

function storeFailure(dir: string, e: unknown): BusError {
  const err = e as NodeJS.ErrnoException;
  // Node's fs messages already start with the code ("ENOSPC: no space left…"); others may not.
  const why = err.code && !err.message.startsWith(err.code) ? `${err.code}: ${err.message}` : err.message;
  return new BusError('store_unavailable', `The hub could not write its store in ${dir} (${why}). Nothing was sent or recorded. Free disk space or fix the folder's permissions, then retry; the hub keeps running.`);
}

export class Hub {
  readonly node: string;
  readonly sessions = new SessionRegistry();
  /** The people at editor windows on this hub (in memory, like sessions). */
  readonly people = new People();
  readonly limits: Limits;
  readonly attention: Attention;
  readonly pushes: Pushes;
  readonly now: () => number;
  private store?: Store;
  private storeError?: string;
  private readonly newId = monotonicFactory();
  private nextSeq = 0;
  private readonly memory: SendMemory;
  private mail = new MailIndex();
  private ledger = new LedgerIndex();
  private readonly listeners = new Set<(ids: readonly string[]) => void>();
  private timer?: NodeJS.Timeout;
  private readonly log: (line: string) => void;
  private remote?: RemoteLink;
  /** Names being recorded right now: a case twin racing one must see it before its commit lands. */
  private readonly naming = new Set<string>();
  private due = new DueIndex();
  /** A timer run still writing: a chase being written is not due again. */
  private ticking = false;

  constructor(readonly options: HubOptions) {
    this.node = options.node ?? `${hostname()}:${basename(options.workspace)}`;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.log = options.log ?? (() => undefined);
    this.now = options.clock ?? Date.now;
    this.memory = new SendMemory(this.limits.duplicateWindowMs);
    const commit = (events: BusEvent[]) => this.commit(events);
    this.attention = new Attention({
      page: (identity, ids) => this.mail.openAmong(this.state, identity, ids),
      unsurfaced: (identity, session, claimed, limit) => this.mail.unsurfaced(this.state, identity, session, claimed, limit),
      commit, sessions: this.sessions, node: this.node, log: this.log, now: this.now,
    });
    this.pushes = new Pushes({
      node: this.node, sessions: this.sessions, now: this.now, commit, unackedOf: (identity) => this.mail.unackedFor(this.state, identity), log: this.log,
      isOpen: (id) => !!this.state.hot[id], replayLimit: options.replayLimit ?? 50,
    });
  }

  private markStarted!: () => void;
  /** Resolves once start() has opened (or failed to open) the store. */
  readonly started = new Promise<void>((resolve) => (this.markStarted = resolve));

  /** Opens the store. If it cannot be opened the hub still serves and every write says why. */
  async start(): Promise<void> {
    try {
      this.store = await Store.open(this.options.storeDir, this.node, {
        idempotencyWindowMs: this.limits.idempotencyWindowMs,
        maxSyncs: this.options.maxSyncs,
        onError: (what, e) => this.log(`store ${what} failed: ${(e as Error).message}`),
        onArchived: (ids) => this.archived(ids),
        now: this.now,
      });
      this.nextSeq = this.store.state.seq;
      this.mail = MailIndex.of(this.store.state);
      this.ledger = LedgerIndex.of(this.store.state);
      this.memory.seed(this.store.state, this.now());
      this.due = DueIndex.of(this.store.state);
      this.log(`store ${this.options.storeDir}: ${Object.keys(this.store.state.hot).length} open, ${this.store.archivedCount} archived`);
    } catch (e) {
      this.storeError = storeFailure(this.options.storeDir, e).message;
      this.log(this.storeError);
    }
    const tickMs = this.options.tickMs ?? 1000;
    if (tickMs > 0) {
      this.timer = setInterval(() => void this.tick(), tickMs);
      this.timer.unref();
    }
    this.markStarted();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.remote?.close().catch((e) => this.log(`closing the link to other nodes: ${(e as Error).message}`));
    for (const s of this.sessions.all()) s.close('the hub is stopping');
    await this.store?.close();
  }

  get state(): BusState {
    return this.store?.state ?? emptyState(this.node);
  }

  /** Called after every change with the ids of the messages it touched (none for sessions, links, names). */
  onChanged(listener: (ids: readonly string[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(ids: readonly string[] = []): void {
    for (const l of this.listeners) l(ids);
  }

  /** Settled messages left the hot set at a checkpoint, with no journal event: the indexes follow too. */
  private archived(ids: string[]): void {
    this.mail.forget(ids);
    this.ledger.note(this.state, ids);
    this.changed(ids);
  }

  private writable(): Store {
    if (!this.store) throw new BusError('store_unavailable', this.storeError ?? 'The store is not open.');
    return this.store;
  }

  /** The one commit path: every journal write goes through here, with its outbox entries. */
  private async commit(events: BusEvent[]): Promise<void> {
    const store = this.writable();
    const touched = messagesTouched(this.state, events);
    try {
      // Outbox entries for other nodes ride in the same journal record as what caused them.
      await store.commit([...events, ...outboxFor(this.state, events)]);
    } catch (e) {
      throw storeFailure(store.dir, e);
    }
    this.mail.note(this.state, events);
    this.due.note(this.state, events);
    this.ledger.note(this.state, touched);
    this.changed(touched);
  }

  private seenWhen(identity: string): RecipientOutcome['seen_when'] {
    return isRemote(identity) ? 'on_another_node' : this.attention.seenWhen(identity, this.now());
  }

  // ---- sessions ----

  /** Makes a name known (addressable) without a live session: the person at the editor. */
  async remember(identity: string, roles?: string[]): Promise<void> {
    const twin = this.caseTwin(identity);
    if (twin) throw new BusError('invalid_identity', caseTwinMessage(identity, twin));
    const known = this.state.identities[identity];
    const sameRoles = !roles || (known && known.roles.join() === roles.join());
    if (known && sameRoles && this.now() - known.lastSeen < 60_000) return;
    this.naming.add(identity);
    try {
      await this.commit([{ type: 'identity', name: identity, at: this.now(), roles: roles ?? known?.roles ?? [] }]);
    } finally {
      this.naming.delete(identity);
    }
  }

  /** A known identity `name` would be mistaken for (same letters, other case). */
  caseTwin(name: string): string | undefined {
    if (this.state.identities[name] || this.naming.has(name)) return undefined;
    return caseTwin([...Object.keys(this.state.identities), ...this.naming], name);
  }

  /**
   * Called once the agent's MCP session is initialised: records the name, replays its mail. A name
   * that is a case twin of a known one is refused here too, whatever the transport checked.
   */
  async attach(session: Session): Promise<void> {
    const twin = this.caseTwin(session.identity);
    if (twin) throw new BusError('invalid_identity', caseTwinMessage(session.identity, twin));
    // Known before live: once a peer shows as live, sending to its name must work.
    try {
      await this.remember(session.identity, session.roles);
    } catch (e) {
      this.log(`could not record identity ${session.identity}: ${(e as Error).message}`);
    }
    if (!session.isOpen()) return; // closed while we were writing: never list a dead peer
    this.sessions.add(session);
    this.log(`session ${session.key} attached as ${session.identity} (${session.client})`);
    this.pushes.replay(session);
    this.changed();
  }

  /** An editor window says who sits at it and whether it has focus; the name becomes addressable. */
  async reportWindow(window: string, report: WindowReport & { roles?: string[] }): Promise<void> {
    await this.remember(report.identity, report.roles);
    this.people.report(window, report, this.now());
    this.due.wake();
    this.changed();
  }

  /** The window's control connection closed: its person is no longer at this hub through it. */
  dropWindow(window: string): void {
    if (this.people.drop(window)) this.changed();
  }

  detach(session: Session): void {
    if (!this.sessions.remove(session)) return;
    this.log(`session ${session.key} (${session.identity}) detached`);
    // "Last seen" is when its last session left, not when it first connected.
    this.commit([{ type: 'identity', name: session.identity, at: this.now(), roles: session.roles }])
      .catch((e) => this.log(`could not record when ${session.identity} left: ${(e as Error).message}`));
    this.changed();
  }

  /**
   * Handoffs a Handoff tool result just showed the caller's model: surfaced once per session.
   * Best effort: a store that cannot be written must not keep an agent from reading its mail.
   */
  async surfacedInTool(caller: Caller, ids: string[], tool: string): Promise<void> {
    if (ids.length === 0 || !this.store) return;
    await this.attention.surfaceInTool(caller.identity, caller.session, `tool ${tool}`, new Set(ids))
      .catch((e) => this.log(`could not record that ${tool} showed ${caller.identity} ${ids.length} handoffs: ${(e as Error).message}`));
  }

  // ---- sending ----

  send(caller: Caller, req: SendDraft): Promise<SendResult> {
    return this.memory.once(caller.identity, req.idempotencyKey, () => this.sendOnce(caller, req));
  }

  private async sendOnce(caller: Caller, req: SendDraft): Promise<SendResult> {
    this.writable();
    const now = this.now();
    const decision = decideSend(this.state, req, {
      caller, now, newId: () => this.newId(now), nextSeq: () => ++this.nextSeq,
      liveIdentities: this.sessions.identities(), recent: this.memory.recent, limits: this.limits,
    });
    if (decision.kind === 'duplicate') {
      // A twin racing the first send waits for it to land; if the store refused the first, this is the send.
      if (!(await this.memory.landed(decision.id))) return this.sendOnce(caller, req);
      return asDuplicate(await this.describeSend(decision.id), decision.why);
    }
    const m = decision.message;
    const forget = this.memory.remember(m, now); // before the await: a racing twin sees it
    try {
      const committing = this.commit([{ type: 'sent', message: m }]);
      this.memory.track(m.id, committing);
      await committing;
    } catch (e) {
      forget();
      throw e;
    }
    this.memory.prune(now);
    this.pushes.prune();
    const hot = this.state.hot[m.id];
    const recipients = m.recipients.map((identity) => {
      const sessions = this.pushes.toIdentity(identity, hot, 'live');
      return { identity, state: sessions > 0 ? 'pushed' as const : 'queued' as const, sessions, seen_when: this.seenWhen(identity) };
    });
    this.attention.arrived(m.recipients);
    return sendResult(m, recipients, m.recipients.some(isRemote) ? await this.relayOutcome(m.id, this.options.relayWaitMs ?? 3000) : undefined);
  }

  private async relayOutcome(id: string, waitMs: number): Promise<RelayOutcome> {
    const relayed = this.state.hot[id]?.relayed;
    if (relayed) return { state: 'on_homeserver', event_id: relayed.eventId, at: relayed.at };
    if (!this.remote) {
      return { state: 'in_outbox', note: 'Matrix is not connected on this hub: the handoff waits in the outbox (persisted with its txnId) and is sent when Matrix connects.' };
    }
    return this.remote.whereIs(id, waitMs);
  }

  private async describeSend(id: string): Promise<SendResult> {
    const view = await this.lookup(id);
    if (!view) throw new BusError('unknown_message', `Message ${id} is no longer on this hub.`);
    const recipients = view.deliveries.map((d) => ({ identity: d.recipient, state: d.state, sessions: sessionsReached(d), seen_when: this.seenWhen(d.recipient) }));
    return sendResult(view.message, recipients, recipients.some((r) => isRemote(r.identity)) ? await this.relayOutcome(id, 0) : undefined);
  }

  // ---- other nodes ----

  /** Attaches (or, with undefined, detaches) the transport to other nodes. */
  setRemote(link: RemoteLink | undefined): void {
    this.remote = link;
    this.changed();
  }

  /** The link's connection state changed (no journal event says so): the views must hear it. */
  remoteChanged(): void {
    this.changed();
  }

  get remoteLink(): RemoteLink | undefined {
    return this.remote;
  }

  /** Whether a message id is known here, open or archived: ingest is idempotent by it. */
  knows(id: string): boolean {
    return !!this.state.hot[id] || !!this.store?.isArchived(id);
  }

  /**
   * Events from the transport to other nodes (ingested messages and receipts, outbox progress),
   * committed in one journal record (with the sync position, so a crash replays all or none of
   * them); each new message is then pushed to every live session of its local recipients, once
   * per session, exactly like a local send.
   */
  async applyRemote(events: BusEvent[]): Promise<void> {
    for (const e of events) if (e.type === 'sent') e.message.seq = ++this.nextSeq;
    await this.commit(events);
    for (const e of events) {
      const hot = e.type === 'sent' ? this.state.hot[e.message.id] : undefined;
      if (!hot) continue;
      for (const r of hot.message.recipients) this.pushes.toIdentity(r, hot, 'live');
      this.attention.arrived(hot.message.recipients);
    }
  }

  // ---- receipts ----

  async receipt(caller: Caller, id: string, kind: ReceiptKind, outcome?: Outcome, summary?: string): Promise<ReceiptAnswer> {
    const store = this.writable();
    const decision = decideReceipt(this.state.hot[id], store.isArchived(id), id, kind, caller, this.now(), outcome, summary);
    if (decision.kind === 'settled') return { message_id: id, state: 'settled', recorded: false };
    if (decision.kind === 'repeat') return { message_id: id, state: decision.state, recorded: false };
    await this.commit([decision.event]);
    return { message_id: id, state: this.state.hot[id]?.deliveries[caller.identity]?.state ?? 'settled', recorded: true };
  }

  // ---- reading ----

  async lookup(id: string): Promise<MessageView | undefined> {
    checkMessageId(id);
    const hot = this.state.hot[id] ?? (await this.store?.archived(id));
    if (!hot) return undefined;
    return { message: hot.message, deliveries: Object.values(hot.deliveries), settled: !this.state.hot[id], resolution: hot.resolution, relayed: hot.relayed };
  }

  /** A message as seen by one identity: only its sender and recipients may read it. */
  async messageFor(identity: string, id: string): Promise<MessageView> {
    const view = await this.lookup(id);
    if (!view) throw new BusError('unknown_message', `No message ${id} on this hub. Check the id with inbox or pending.`);
    if (view.message.from !== identity && !view.message.recipients.includes(identity)) {
      throw new BusError('not_addressed_to_you', `Message ${id} is between ${view.message.from} and ${view.message.recipients.join(', ')}; ${identity} is neither its sender nor a recipient.`);
    }
    return view;
  }

  /** Open mail of an identity (not yet done, stuck or failed), oldest first; `afterSeq` pages on from the last seq seen. */
  inbox(identity: string, opts: { unreadOnly?: boolean; limit?: number; afterSeq?: number } = {}): InboxItem[] {
    const keep = opts.unreadOnly ? (hot: HotMessage) => isUnread(hot.deliveries[identity]) : undefined;
    return this.mail.openFor(this.state, identity, { afterSeq: opts.afterSeq, limit: opts.limit ?? 20, keep })
      .map((hot) => ({ message: hot.message, delivery: hot.deliveries[identity] }));
  }

  /** How many open handoffs the identity has not read. */
  unread(identity: string): number {
    return this.mail.unreadCount(identity);
  }

  /** How many handoffs wait for the identity's ACK and the oldest few: the footer on every tool result. */
  unacked(identity: string, oldest = 5): UnackedSummary {
    return this.mail.unackedSummary(this.state, identity, oldest);
  }

  pending(identity?: string): LedgerEntry[] {
    return pendingLedger(this.state, this.now(), identity);
  }

  coverage(): Coverage[] {
    return coverage(this.state, (identity) => this.sessions.count(identity), this.now(), (identity) => this.people.presence(identity, this.now()), (identity) => this.ledger.unacked(identity));
  }

  // ---- people's actions (editor, CLI) ----

  /** Pushes again, flagged as a chase, to every live session of each unacked recipient. */
  async chase(id: string, by: string): Promise<{ pushed: number }> {
    const events = decideChase(this.state.hot[id], id, this.now());
    let pushed = 0;
    for (const e of events) if (e.type === 'chased') pushed += this.pushes.toIdentity(e.recipient, this.state.hot[id], 'chase');
    if (events.length) await this.commit(events);
    this.log(`${by} chased ${id}: pushed to ${pushed} sessions`);
    return { pushed };
  }

  async resolve(id: string, by: string, note?: string): Promise<void> {
    await this.commit([decideResolve(this.state.hot[id], id, by, this.now(), note)]);
  }

  /** Each person at a window on this hub, with their inbox: the snapshot carries it to every window. */
  peopleViews(): PersonView[] {
    const now = this.now();
    return this.people.identities().map((identity) => {
      const inbox = personInbox(this.mail.newestFor(this.state, identity, PERSON_INBOX), identity);
      return { identity, presence: this.people.presence(identity, now)!, unread: inbox.filter((i) => i.unread).length, inbox };
    });
  }

  snapshot(): Snapshot {
    return snapshotOf(this.snapshotInput());
  }

  /** The rows of the given messages (open ones upserted, the rest removed) and the summary, for change notifications. */
  changeOf(ids: Iterable<string>, since: number): SnapshotChange {
    return changeOf(this.snapshotInput(), ids, since);
  }

  private snapshotInput(): SnapshotInput {
    return {
      node: this.node, workspace: this.options.workspace, now: this.now(), state: this.state, ledger: this.ledger, sessions: this.sessions, remote: this.remote,
      people: this.peopleViews(), person: (identity) => this.people.presence(identity, this.now()),
      store: { ok: !!this.store, dir: this.options.storeDir, error: this.storeError, archived: this.store?.archivedCount ?? 0 },
    };
  }

  /** Chases once past the SLA, escalates once a period later, dead-letters past the TTL. Public so fake-clock tests can drive it. */
  async tick(): Promise<void> {
    if (!this.store || this.ticking) return;
    const now = this.now();
    const { events, passed } = this.due.take(this.state, now, {
      person: () => this.people.escalationTarget(), newId: () => this.newId(now), nextSeq: () => ++this.nextSeq, node: this.node,
    });
    if (events.length === 0) {
      if (passed.length) this.changed(passed);
      return;
    }
    this.ticking = true;
    try {
      await this.commit(events);
    } catch (e) {
      this.log(`timer events not recorded: ${(e as Error).message}`);
      return;
    } finally {
      this.ticking = false;
    }
    for (const e of events) {
      if (e.type === 'chased' && this.state.hot[e.id]) this.pushes.toIdentity(e.recipient, this.state.hot[e.id], 'chase');
      if (e.type === 'failed') this.log(`dead-lettered ${e.id} for ${e.recipient}: ${e.reason}`);
      if (e.type === 'escalated') this.log(`escalated ${e.id} (${e.recipient} silent past its chase) to ${e.to} as ${e.messageId}`);
      const escalation = e.type === 'sent' ? this.state.hot[e.message.id] : undefined;
      if (escalation) {
        for (const r of escalation.message.recipients) this.pushes.toIdentity(r, escalation, 'live');
        this.attention.arrived(escalation.message.recipients);
      }
    }
    if (passed.length) this.changed(passed);
  }
}

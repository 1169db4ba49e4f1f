// The hub: the bus state behind a store, the live sessions, and the pushes. Transports (MCP
// sockets, the editor's control connection, Matrix) call these methods; none decides delivery.
import { hostname } from 'node:os';
import { basename } from 'node:path';
import { monotonicFactory } from 'ulid';
import { checkMessageId, decideReceipt, decideSend, DEFAULT_LIMITS, sendFingerprint, type Caller, type Limits, type RecentSends, type SendRequest } from './bus/decide';
import { BusError } from './bus/errors';
import { caseTwin, caseTwinMessage } from './bus/identity';
import { coverage, dueEvents, isUnread, ledgerEntry, overdue, pendingLedger, sessionsReached, unackedFor, type Coverage, type LedgerEntry } from './bus/ledger';
import type { BusEvent, BusState, Delivery, HotMessage, Message, Outcome, PushKind, ReceiptKind } from './bus/model';
import { emptyState } from './bus/model';
import { MailIndex } from './bus/mailIndex';
import { isTerminal } from './bus/reduce';
import { isRemote, outboxFor } from './bus/relay';
import { Attention } from './attention';
import type { SeenWhen } from '../shared/seenWhen';
import type { RelayOutcome, RemoteLink, RemoteStatus } from './remote';
import { renderMessage } from './render';
import { SessionRegistry, type Session } from './sessions';
import { Store } from './store/store';

export interface HubOptions {
  workspace: string;
  storeDir: string;
  node?: string;
  limits?: Partial<Limits>;
  /** Unacked messages replayed on attach; past this a truncation notice says how many more. */
  replayLimit?: number;
  tickMs?: number;
  log?: (line: string) => void;
  /** How long a send to remote recipients waits for the homeserver before answering. */
  relayWaitMs?: number;
}

export interface RecipientOutcome {
  identity: string;
  /** For a recipient on another node still `queued` here: `relayed` (on the homeserver, `event_id`),
   * `in_outbox`, or `failed` (refused); then its node's pushed / surfaced / ACK as receipts arrive. */
  state: Delivery['state'] | 'relayed' | 'in_outbox';
  /** Live sessions on this hub it was pushed to (0 for a recipient on another node: see state). */
  sessions: number;
  /** The homeserver's event that carries it (recipients on other nodes). */
  event_id?: string;
  /** When its model will see it, as far as its hooked sessions tell: now, next tool call, next turn, or only when it calls inbox. */
  seen_when: SeenWhen | 'on_another_node';
}

export interface SendResult {
  message_id: string;
  seq: number;
  thread: string;
  /** `pushed`: written to at least one live session here (not proof of reading); `relayed`: none
   * here, but on the homeserver for recipients on other nodes; `queued`: neither. */
  state: 'pushed' | 'relayed' | 'queued';
  recipients: RecipientOutcome[];
  duplicate?: { why: 'idempotency_key' | 'probable_duplicate'; note: string };
  /** Present when some recipients are on other nodes: whether the homeserver has it yet. */
  relay?: RelayOutcome;
}

export interface SessionInfo {
  key: string;
  identity: string;
  roles: string[];
  client: string;
  connectedAt: number;
  lastSeen: number;
}

export interface MessageView {
  message: HotMessage['message'];
  deliveries: Delivery[];
  settled: boolean;
  resolution?: HotMessage['resolution'];
  relayed?: HotMessage['relayed'];
}

export interface Snapshot {
  node: string;
  workspace: string;
  now: number;
  store: { ok: boolean; dir: string; error?: string; archived: number };
  sessions: SessionInfo[];
  coverage: Coverage[];
  ledger: LedgerEntry[];
  overdue: { count: number; oldestSentAt?: number; ids: string[] };
  events: LedgerEntry[];
  /** Present when a transport to other nodes is attached. */
  remote?: RemoteStatus;
}

/** The honest answer to a send: `pushed` only if some live session was written to. */
function sendResult(m: Message, local: RecipientOutcome[], relay?: RelayOutcome): SendResult {
  const recipients = local.map((r) => remoteOutcome(r, relay));
  return {
    message_id: m.id,
    seq: m.seq,
    thread: m.thread,
    state: recipients.some((r) => r.sessions > 0) ? 'pushed' : recipients.some((r) => r.state === 'relayed') ? 'relayed' : 'queued',
    recipients,
    ...(relay ? { relay } : {}),
  };
}

/** A recipient on another node: its own state from the relay, until its node's receipts say more. */
function remoteOutcome(r: RecipientOutcome, relay?: RelayOutcome): RecipientOutcome {
  if (!isRemote(r.identity)) return r;
  if (r.state !== 'queued' || !relay) return r;
  if (relay.state === 'on_homeserver') return { ...r, state: 'relayed', event_id: relay.event_id };
  return { ...r, state: relay.state === 'refused' ? 'failed' : 'in_outbox' };
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
  readonly limits: Limits;
  private store?: Store;
  private storeError?: string;
  private readonly newId = monotonicFactory();
  private nextSeq = 0;
  private readonly recent: RecentSends = new Map();
  private readonly inflight = new Map<string, Promise<SendResult>>();
  /**
   * `${identity}\n${id}` for every message pushed to some session of the identity. Kept in memory
   * and set at push time, because the journaled push record lands a moment later and a session
   * reconnecting in between must still get the message flagged as a replay.
   */
  private readonly pushedToIdentity = new Set<string>();
  private pushedPruneAt = 4096;
  private recentPruneAt = 1024;
  private readonly listeners = new Set<() => void>();
  private timer?: NodeJS.Timeout;
  private readonly log: (line: string) => void;
  private remote?: RemoteLink;
  readonly attention: Attention;
  private mail = new MailIndex();

  constructor(readonly options: HubOptions) {
    this.node = options.node ?? `${hostname()}:${basename(options.workspace)}`;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.log = options.log ?? (() => undefined);
    this.attention = new Attention({ mail: (identity) => this.mailOf(identity), commit: (e) => this.commit(e), sessions: this.sessions, node: this.node, log: this.log });
  }

  private seenWhen(identity: string): RecipientOutcome['seen_when'] {
    return isRemote(identity) ? 'on_another_node' : this.attention.seenWhen(identity);
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

  private markStarted!: () => void;
  /** Resolves once start() has opened (or failed to open) the store. */
  readonly started = new Promise<void>((resolve) => (this.markStarted = resolve));

  /** Opens the store. If it cannot be opened the hub still serves and every write says why. */
  async start(): Promise<void> {
    try {
      this.store = await Store.open(this.options.storeDir, this.node, {
        idempotencyWindowMs: this.limits.idempotencyWindowMs,
        onError: (what, e) => this.log(`store ${what} failed: ${(e as Error).message}`),
      });
      this.nextSeq = this.store.state.seq;
      this.mail = MailIndex.of(this.store.state);
      const now = Date.now();
      for (const h of Object.values(this.store.state.hot)) {
        if (now - h.message.sentAt < this.limits.duplicateWindowMs) {
          this.recent.set(sendFingerprint(h.message.from, h.message.recipients, h.message.body), { id: h.message.id, at: h.message.sentAt });
        }
      }
      this.log(`store ${this.options.storeDir}: ${Object.keys(this.store.state.hot).length} open, ${this.store.archivedCount} archived`);
    } catch (e) {
      this.storeError = storeFailure(this.options.storeDir, e).message;
      this.log(this.storeError);
    }
    this.timer = setInterval(() => void this.tick(), this.options.tickMs ?? 1000);
    this.timer.unref();
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

  onChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  private writable(): Store {
    if (!this.store) throw new BusError('store_unavailable', this.storeError ?? 'The store is not open.');
    return this.store;
  }

  private async commit(events: BusEvent[]): Promise<void> {
    const store = this.writable();
    try {
      // Outbox entries for other nodes ride in the same journal record as what caused them.
      await store.commit([...events, ...outboxFor(this.state, events)]);
    } catch (e) {
      throw storeFailure(store.dir, e);
    }
    this.mail.note(events);
    this.changed();
  }

  /** An identity's open mail, oldest first, from the index (not a scan of everyone's). */
  private mailOf(identity: string): HotMessage[] {
    return this.mail.openFor(this.state, identity);
  }

  // ---- sessions ----

  /** Makes a name known (addressable) without a live session: the person at the editor. */
  async remember(identity: string, roles?: string[]): Promise<void> {
    const known = this.state.identities[identity];
    const twin = this.caseTwin(identity);
    if (twin) throw new BusError('invalid_identity', caseTwinMessage(identity, twin));
    const sameRoles = !roles || (known && known.roles.join() === roles.join());
    if (known && sameRoles && Date.now() - known.lastSeen < 60_000) return;
    await this.commit([{ type: 'identity', name: identity, at: Date.now(), roles: roles ?? known?.roles ?? [] }]);
  }

  /** A known identity `name` would be mistaken for (same letters, other case). */
  caseTwin(name: string): string | undefined {
    return this.state.identities[name] ? undefined : caseTwin(Object.keys(this.state.identities), name);
  }

  /** Called once the agent's MCP session is initialised: records the name, replays its mail. */
  async attach(session: Session): Promise<void> {
    // Known before live: once a peer shows as live, sending to its name must work.
    try {
      await this.remember(session.identity, session.roles);
    } catch (e) {
      this.log(`could not record identity ${session.identity}: ${(e as Error).message}`);
    }
    if (!session.isOpen()) return; // closed while we were writing: never list a dead peer
    this.sessions.add(session);
    this.log(`session ${session.key} attached as ${session.identity} (${session.client})`);
    this.replay(session);
    this.changed();
  }

  detach(session: Session): void {
    if (this.sessions.remove(session)) {
      this.log(`session ${session.key} (${session.identity}) detached`);
      // "Last seen" is when its last session left, not when it first connected.
      this.store?.commit([{ type: 'identity', name: session.identity, at: Date.now(), roles: session.roles }])
        .catch((e) => this.log(`could not record when ${session.identity} left: ${(e as Error).message}`));
      this.changed();
    }
  }

  /**
   * Unacked mail to a (re)attached session, bounded. Mail this identity has never been pushed
   * goes first, in FIFO order; then replays of what it was pushed before, flagged `replayed`,
   * fewest pushes to this session key first — a push to a connection that died right after it is
   * the likeliest to have gone unread, and the bound rotates through the rest over reconnects.
   * Past the bound, one notice says how many more wait in the inbox.
   */
  private replay(session: Session): void {
    const limit = this.options.replayLimit ?? 50;
    const seen = (hot: HotMessage) => this.pushedToIdentity.has(`${session.identity}\n${hot.message.id}`) || hot.deliveries[session.identity].pushes.length > 0;
    const waiting = unackedFor(this.mailOf(session.identity), session.identity).filter((h) => !session.pushed.has(h.message.id));
    const fresh = waiting.filter((h) => !seen(h));
    const pushesTo = (h: HotMessage) => h.deliveries[session.identity].pushes.filter((p) => p.session === session.key).length;
    const again = waiting.filter((h) => seen(h)).map((h) => ({ h, n: pushesTo(h) })).sort((a, b) => a.n - b.n || a.h.message.seq - b.h.message.seq).map((x) => x.h);
    for (const hot of fresh.slice(0, limit)) this.pushTo(session, hot, 'live');
    for (const hot of again.slice(0, Math.max(0, limit - fresh.length))) this.pushTo(session, hot, 'replayed');
    if (waiting.length > limit) {
      session.deliver({
        id: '', from: 'handoff', thread: '', kind: 'replayed',
        text: `Replay truncated: ${waiting.length - limit} more unacked handoffs were not pushed. Call inbox to see them all.`,
      });
    }
  }

  /** At most one push per message per connection, except an explicit chase. */
  private pushTo(session: Session, hot: HotMessage, kind: PushKind): boolean {
    const m = hot.message;
    if (kind !== 'chase' && session.pushed.has(m.id)) return false;
    if (!session.deliver({ id: m.id, from: m.from, thread: m.thread, kind, text: renderMessage(m, kind) })) return false;
    session.pushed.add(m.id);
    this.pushedToIdentity.add(`${session.identity}\n${m.id}`);
    const at = Date.now();
    // Through commit(): a remote sender's first push goes back to it as progress (relay.ts).
    if (this.store) {
      this.commit([{ type: 'pushed', id: m.id, recipient: session.identity, push: { session: session.key, node: this.node, at, kind } }])
        .catch((e) => this.log(`could not record a push of ${m.id}: ${(e as Error).message}`));
    }
    return true;
  }

  private pushToIdentity(identity: string, hot: HotMessage, kind: PushKind): number {
    let n = 0;
    for (const s of this.sessions.forIdentity(identity)) if (this.pushTo(s, hot, kind)) n++;
    return n;
  }

  // ---- sending ----

  async send(caller: Caller, req: SendRequest): Promise<SendResult> {
    const keyed = req.idempotencyKey ? `${caller.identity}\n${req.idempotencyKey}` : undefined;
    const racing = keyed && this.inflight.get(keyed);
    if (racing) return this.asDuplicate(await racing, 'idempotency_key');
    const work = this.sendOnce(caller, req);
    if (keyed) {
      this.inflight.set(keyed, work);
      work.finally(() => this.inflight.delete(keyed)).catch(() => undefined);
    }
    return work;
  }

  private asDuplicate(first: SendResult, why: 'idempotency_key' | 'probable_duplicate'): SendResult {
    const note = why === 'idempotency_key'
      ? 'This idempotency key was already used: nothing new was sent; this is the first message.'
      : 'The same body went to the same recipients moments ago: treated as a probable duplicate, nothing new was sent. Pass insist: true if you really mean to send it again.';
    return { ...first, duplicate: { why, note } };
  }

  private async sendOnce(caller: Caller, req: SendRequest): Promise<SendResult> {
    this.writable();
    const now = Date.now();
    const decision = decideSend(this.state, req, {
      caller,
      now,
      newId: () => this.newId(now),
      nextSeq: () => ++this.nextSeq,
      liveIdentities: this.sessions.identities(),
      recent: this.recent,
      limits: this.limits,
    });
    if (decision.kind === 'duplicate') {
      return this.asDuplicate(await this.describeSend(decision.id), decision.why);
    }
    const m = decision.message;
    const relayed = m.recipients.some(isRemote);
    const fingerprint = sendFingerprint(m.from, m.recipients, m.body);
    this.recent.set(fingerprint, { id: m.id, at: now }); // before the await: a racing twin sees it
    try {
      await this.commit([{ type: 'sent', message: m }]);
    } catch (e) {
      this.recent.delete(fingerprint);
      throw e;
    }
    this.pruneMemory(now);
    const hot = this.state.hot[m.id];
    const recipients = m.recipients.map((identity) => {
      const sessions = this.pushToIdentity(identity, hot, 'live');
      return { identity, state: sessions > 0 ? 'pushed' as const : 'queued' as const, sessions, seen_when: this.seenWhen(identity) };
    });
    this.attention.arrived(m.recipients);
    return sendResult(m, recipients, relayed ? await this.relayOutcome(m.id, this.options.relayWaitMs ?? 3000) : undefined);
  }

  private async relayOutcome(id: string, waitMs: number): Promise<RelayOutcome> {
    const relayed = this.state.hot[id]?.relayed;
    if (relayed) return { state: 'on_homeserver', event_id: relayed.eventId, at: relayed.at };
    if (!this.remote) {
      return { state: 'in_outbox', note: 'Matrix is not connected on this hub: the handoff waits in the outbox (persisted with its txnId) and is sent when Matrix connects.' };
    }
    return this.remote.whereIs(id, waitMs);
  }

  private pruneMemory(now: number): void {
    if (this.recent.size >= this.recentPruneAt) {
      for (const [k, v] of this.recent) if (now - v.at > this.limits.duplicateWindowMs) this.recent.delete(k);
      this.recentPruneAt = Math.max(1024, 2 * this.recent.size); // amortised: O(1) per send
    }
    if (this.pushedToIdentity.size >= this.pushedPruneAt) {
      for (const k of this.pushedToIdentity) if (!this.state.hot[k.slice(k.indexOf('\n') + 1)]) this.pushedToIdentity.delete(k);
      this.pushedPruneAt = Math.max(4096, 2 * this.pushedToIdentity.size); // amortised: O(1) per push
    }
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
   * committed in one journal record (with the sync position,
   * so a crash replays all or none of them); each new message is then pushed to every live
   * session of its local recipients, once per session, exactly like a local send.
   */
  async applyRemote(events: BusEvent[]): Promise<void> {
    for (const e of events) if (e.type === 'sent') e.message.seq = ++this.nextSeq;
    await this.commit(events);
    for (const e of events) {
      const hot = e.type === 'sent' ? this.state.hot[e.message.id] : undefined;
      if (!hot) continue;
      for (const r of hot.message.recipients) this.pushToIdentity(r, hot, 'live');
      this.attention.arrived(hot.message.recipients);
    }
  }

  // ---- receipts ----

  async receipt(caller: Caller, id: string, kind: ReceiptKind, outcome?: Outcome, summary?: string): Promise<{ message_id: string; state: Delivery['state'] | 'settled'; recorded: boolean }> {
    const store = this.writable();
    checkMessageId(id);
    const hot = this.state.hot[id];
    const event = decideReceipt(hot, store.isArchived(id), id, kind, caller, Date.now(), outcome, summary);
    if (!event || event.type !== 'receipt') return { message_id: id, state: 'settled', recorded: false };
    const d = hot.deliveries[caller.identity];
    const repeat = d.receipts.some((r) => r.kind === kind && r.by === caller.identity && r.outcome === outcome && (kind !== 'result' || r.summary === summary));
    if (repeat) return { message_id: id, state: d.state, recorded: false };
    await this.commit([event]);
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
  inbox(identity: string, opts: { unreadOnly?: boolean; limit?: number; afterSeq?: number } = {}): { message: HotMessage['message']; delivery: Delivery }[] {
    const out: { message: HotMessage['message']; delivery: Delivery }[] = [];
    for (const hot of this.mailOf(identity)) {
      const d = hot.deliveries[identity];
      if (!d || hot.resolution || isTerminal(d.state) || hot.message.seq <= (opts.afterSeq ?? 0)) continue;
      if (opts.unreadOnly && !isUnread(d)) continue;
      out.push({ message: hot.message, delivery: d });
    }
    return out.slice(0, opts.limit ?? 20);
  }

  unacked(identity: string): string[] {
    return this.unackedMessages(identity).map((h) => h.message.id);
  }

  /** Open handoffs the identity has not ACKed, oldest first. */
  unackedMessages(identity: string): HotMessage[] {
    return unackedFor(this.mailOf(identity), identity);
  }

  pending(identity?: string): LedgerEntry[] {
    return pendingLedger(this.state, Date.now(), identity);
  }

  coverage(): Coverage[] {
    return coverage(this.state, (identity) => this.sessions.count(identity), Date.now());
  }

  // ---- people's actions (editor, CLI) ----

  /** Pushes again, flagged as a chase, to every live session of each unacked recipient. */
  async chase(id: string, by: string): Promise<{ pushed: number }> {
    const hot = this.state.hot[id];
    if (!hot) throw new BusError('unknown_message', `Message ${id} is not open on this hub (settled or unknown); there is nothing to chase.`);
    let pushed = 0;
    const events: BusEvent[] = [];
    for (const d of Object.values(hot.deliveries)) {
      if (d.state === 'acked' || d.state === 'done') continue;
      events.push({ type: 'chased', id, recipient: d.recipient, at: Date.now() });
      pushed += this.pushToIdentity(d.recipient, hot, 'chase');
    }
    if (events.length) await this.commit(events);
    this.log(`${by} chased ${id}: pushed to ${pushed} sessions`);
    return { pushed };
  }

  async resolve(id: string, by: string, note?: string): Promise<void> {
    if (!this.state.hot[id]) throw new BusError('unknown_message', `Message ${id} is not open on this hub (settled or unknown).`);
    await this.commit([{ type: 'resolved', id, resolution: { by, at: Date.now(), note } }]);
  }

  snapshot(limit = 200): Snapshot {
    const now = Date.now();
    const late = overdue(this.state, now);
    const events = Object.values(this.state.hot)
      .sort((a, b) => b.message.seq - a.message.seq)
      .slice(0, limit)
      .map((h) => ledgerEntry(h, now));
    return {
      node: this.node,
      workspace: this.options.workspace,
      now,
      store: { ok: !!this.store, dir: this.options.storeDir, error: this.storeError, archived: this.store?.archivedCount ?? 0 },
      sessions: this.sessions.all().map((s) => ({ key: s.key, identity: s.identity, roles: s.roles, client: s.client, connectedAt: s.connectedAt, lastSeen: s.lastSeen })),
      coverage: this.coverage(),
      ledger: this.pending(),
      overdue: { count: late.count, oldestSentAt: late.oldestSentAt, ids: late.items.map((i) => i.id) },
      events,
      ...(this.remote ? { remote: this.remote.status() } : {}),
    };
  }

  /** Chases once past the SLA, dead-letters past the TTL. */
  private async tick(): Promise<void> {
    if (!this.store) return;
    const events = dueEvents(this.state, Date.now());
    if (events.length === 0) return;
    try {
      await this.commit(events);
    } catch (e) {
      this.log(`timer events not recorded: ${(e as Error).message}`);
      return;
    }
    for (const e of events) {
      if (e.type === 'chased' && this.state.hot[e.id]) this.pushToIdentity(e.recipient, this.state.hot[e.id], 'chase');
      if (e.type === 'failed') this.log(`dead-lettered ${e.id} for ${e.recipient}: ${e.reason}`);
    }
  }
}

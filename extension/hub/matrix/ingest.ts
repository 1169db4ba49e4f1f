// Reads the room: a long-poll /sync from the persisted position, gaps (limited syncs) backfilled
// through /messages back to the last event this hub ingested, and each sync's events committed
// in one journal record together with the new position — so after a crash or an outage nothing
// is skipped and nothing is taken twice. Messages are idempotent by id as well: a txnId replayed
// past the homeserver's dedupe window makes a second event with the same message id.
import { dict } from '../bus/dict';
import type { BusEvent } from '../bus/model';
import { remoteReceiptEvent } from '../bus/remoteReceipt';
import type { Hub } from '../hub';
import type { AdvisoryRead } from '../../protocol/views';
import { classify, type Homeserver, type JoinedRoom, type SyncResponse } from './homeserver';
import type { NodeBindings } from './binding';
import type { Drops } from './drops';
import { verifyWire } from './keys';
import type { RoomCrypto } from './roomCrypto';
import { personReaction, personReply, type PeopleContext, type PersonOutcome } from './personEvents';
import {
  BATCH_KEY,
  HANDOFF_KEY,
  localMessage,
  MESSAGE_TYPE,
  NODE_STATE,
  PROGRESS_TYPE,
  REACTION_TYPE,
  RECEIPT_KEY,
  readAnnouncement,
  readBatch,
  readEvent,
  readMessage,
  readReaction,
  readReceipt,
  readReply,
  type BatchItem,
  type RawEvent,
  type WireMessage,
  type WireReceipt,
} from './wire';
import type { Log } from '../../protocol/hubLog';

const POLL_MS = 30_000;
const MAX_BACKOFF_MS = 2000;
const BACKFILL_PAGE = 100;
const BACKFILL_MAX_PAGES = 100;
/** Own events remembered for m.read's "up to here"; older ones match only exactly. */
const OWN_ORDER_KEPT = 10_000;

export interface IngestHooks {
  log: Log;
  onTrouble: (why: string, refused: boolean) => void;
  onSynced: () => void;
  /** Another account wrote this node's announcement. */
  onOwnNodeClaimed: () => void;
  /** This node's announcement as the room holds it, written by our own account (from this hub, or
   * another device of the account): the link puts its own back if they differ. */
  onOwnAnnouncement: (content: Record<string, unknown>) => void;
  /** The room turned on end-to-end encryption while this hub read it in the clear. */
  onEncrypted: () => void;
}

const ENCRYPTED = 'm.room.encrypted';

export class Ingest {
  private readonly abort = new AbortController();
  /** Our own handoff events in timeline order, for m.read's "read up to here" (this run only). */
  private readonly ownOrder = new Map<string, { order: number; ids: string[] }>();
  private order = 0;
  private readonly reads = new Map<string, AdvisoryRead[]>();
  private readonly rejected = new Set<string>();
  /** The persisted position was refused (another homeserver, or one that forgot it). */
  private restart = false;

  constructor(
    private readonly hub: Hub,
    private readonly hs: Homeserver,
    private readonly room: string,
    private readonly allowed: ReadonlySet<string>,
    private readonly ownUser: string,
    private readonly bindings: NodeBindings,
    private readonly drops: Drops,
    private readonly timelineLimit: number,
    private readonly hooks: IngestHooks,
    /** The room's crypto, when it is encrypted: events are decrypted, and only encrypted ones taken. */
    private readonly crypto?: RoomCrypto,
  ) {}

  stop(): void {
    this.abort.abort();
  }

  /** Advisory m.read receipts of Matrix users, by message id (open messages only). */
  advisoryReads(): Record<string, AdvisoryRead[]> {
    const out = dict<AdvisoryRead[]>();
    for (const [id, reads] of this.reads) {
      if (this.hub.state.hot[id]) out[id] = reads;
      else this.reads.delete(id);
    }
    return out;
  }

  async run(): Promise<void> {
    const filter = {
      presence: { not_types: ['*'] },
      account_data: { not_types: ['*'] },
      room: {
        rooms: [this.room],
        timeline: { limit: this.timelineLimit },
        state: { lazy_load_members: true },
        ephemeral: { types: ['m.receipt'] },
        account_data: { not_types: ['*'] },
      },
    };
    let failures = 0;
    // The first sync of a run returns at once: a long poll from a saved position would keep a
    // restarted hub 'connecting' until the room next changes.
    let caughtUp = false;
    while (!this.abort.signal.aborted) {
      const since = this.restart ? undefined : this.hub.state.relay?.since;
      let res: SyncResponse;
      try {
        res = await this.hs.sync(since, filter, since && caughtUp ? POLL_MS : 0, this.abort.signal);
      } catch (e) {
        if (this.abort.signal.aborted) return;
        const f = classify(e);
        if (f.status === 400 && since) {
          this.hooks.log(
            `the homeserver refused the saved sync position (${f.why}); starting from its present state`,
            'warn',
          );
          this.restart = true;
          continue;
        }
        this.hooks.onTrouble(f.why, f.kind === 'refused');
        await this.pause(
          f.kind === 'retry' && f.afterMs !== undefined
            ? f.afterMs
            : f.kind === 'refused'
              ? 10_000
              : Math.min(100 * 2 ** failures++, MAX_BACKOFF_MS),
        );
        continue;
      }
      failures = 0;
      try {
        await this.take(res);
        this.restart = false;
        caughtUp = true;
        this.hooks.onSynced();
      } catch (e) {
        if (this.abort.signal.aborted) return;
        // Not committed, so the position did not move: the same sync is fetched and taken again.
        this.hooks.onTrouble(`ingest: ${(e as Error).message}`, false);
        await this.pause(1000);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.abort.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }

  /**
   * One sync response → one commit. The first time this hub reads the room its history is not
   * taken: handoffs from before this node announced its identities cannot be addressed to it.
   * After that, a gap — a limited sync, or a fresh one because the saved position was refused —
   * is backfilled back to the last event taken.
   */
  private async take(res: SyncResponse): Promise<void> {
    // Room keys come as to-device messages: the device takes them before the timeline is read.
    await this.crypto?.receive(res);
    const joined: JoinedRoom | undefined = res.rooms?.join?.[this.room];
    const events: BusEvent[] = [];
    let lastEventId: string | undefined;
    let messages: RawEvent[] = [];
    const valid = (raw: RawEvent[]) =>
      raw.flatMap((e) => {
        const ev = readEvent(e);
        if (typeof ev !== 'string') return [ev];
        this.drops.note(
          'malformed',
          { event_id: String(e?.event_id), sender: String(e?.sender), type: String(e?.type) },
          ev,
        );
        return [];
      });
    if (joined) {
      let timeline = joined.timeline?.events ?? [];
      const last = this.hub.state.relay?.rooms[this.room]?.lastEventId;
      const first = last === undefined;
      const seen = last ? timeline.findIndex((e) => e.event_id === last) : -1;
      if (seen >= 0) timeline = timeline.slice(seen + 1);
      else if (last && joined.timeline?.limited && joined.timeline.prev_batch) {
        const gap = await this.backfill(joined.timeline.prev_batch, last);
        this.hooks.log(`backfilled ${gap.length} events that a limited sync skipped`);
        timeline = [...gap, ...timeline];
      }
      lastEventId = timeline.at(-1)?.event_id;
      const state = valid(joined.state?.events ?? []);
      timeline = valid(timeline);
      for (const ev of [...state, ...timeline.filter((e) => e.state_key !== undefined)]) {
        if (ev.type === NODE_STATE) this.announced(ev, events);
        else if (ev.type === 'm.room.member') this.crypto?.membersChanged();
        else if (ev.type === 'm.room.encryption' && !this.crypto) this.hooks.onEncrypted();
      }
      messages = timeline.filter((e) => e.state_key === undefined && !first);
      for (const e of joined.ephemeral?.events ?? []) if (e.type === 'm.receipt') this.readMarkers(e.content);
    }
    // Kept events are tried after every sync: their keys may come in one that has no room events.
    let settled = new Set<string>();
    if (this.crypto) ({ messages, settled } = await this.decrypted(messages, valid));
    const taken = new Set<string>();
    for (const ev of messages) this.message(ev, events, taken);
    events.push({ type: 'synced', since: res.next_batch, room: this.room, lastEventId });
    try {
      await this.hub.applyRemote(events);
    } finally {
      this.bindings.settle(); // committed to the journal, or to be claimed again from the same sync
    }
    await this.crypto?.kept.done(settled);
  }

  /**
   * An encrypted room's events in the clear: kept ones first (keptEvents.ts), then this sync's.
   * One whose key has not come, or whose hub device no node has claimed yet, is kept before this
   * sync commits. `settled`: kept events taken or dropped now, forgotten after the commit.
   */
  private async decrypted(
    timeline: RawEvent[],
    valid: (raw: RawEvent[]) => RawEvent[],
  ): Promise<{ messages: RawEvent[]; settled: Set<string> }> {
    const crypto = this.crypto!;
    const { events: kept, givenUp } = crypto.kept.due();
    for (const ev of givenUp)
      this.drops.note('undecryptable', ev, 'not taken within a day: its room key or its device claim never came');
    const hubs = this.bindings.accounts();
    const messages: RawEvent[] = [];
    const keep: RawEvent[] = [];
    const settled = new Set<string>();
    for (const ev of [...valid(kept), ...timeline]) {
      const wasKept = crypto.kept.has(ev.event_id);
      if (wasKept) settled.add(ev.event_id); // unless kept again below
      if (ev.type === REACTION_TYPE) {
        messages.push(ev); // Matrix clients send reactions in the clear, even in encrypted rooms
        continue;
      }
      if (ev.type !== ENCRYPTED) {
        this.drops.note('not_encrypted', ev, 'the room is end-to-end encrypted; events in the clear are not taken');
        continue;
      }
      if (ev.sender !== this.ownUser && !this.allowedSender(ev)) continue;
      const d = await crypto.decrypt(ev);
      const later = (why: string) => {
        settled.delete(ev.event_id);
        if (wasKept) return;
        keep.push(ev);
        this.hooks.log(`${ev.event_id} from ${ev.sender} is kept for later (${why}); tried again after each sync`);
      };
      if (!d.ok) {
        later(d.why);
        continue;
      }
      if (hubs.has(ev.sender) && d.trust !== 'verified' && d.trust !== 'this hub') {
        if (!crypto.claims.hasUser(ev.sender)) {
          later(`no node on ${ev.sender} has claimed a device yet`);
          continue;
        }
        this.drops.note(
          'unverified_device',
          ev,
          `sent by device ${d.device ?? '(unknown)'} of ${ev.sender}, which no node's key signed for`,
        );
        continue;
      }
      const [clear] = valid([d.event]);
      if (clear) messages.push(clear);
    }
    await crypto.kept.keep(keep);
    return { messages, settled };
  }

  /** Events between the last one ingested and a limited sync's timeline, oldest first. */
  private async backfill(from: string, lastEventId: string): Promise<RawEvent[]> {
    const newestFirst: RawEvent[] = [];
    let token = from;
    for (let page = 0; page < BACKFILL_MAX_PAGES; page++) {
      const { chunk, end } = await this.hs.messages(this.room, token, BACKFILL_PAGE, this.abort.signal);
      for (const ev of chunk) {
        if (ev.event_id === lastEventId) return newestFirst.reverse();
        newestFirst.push(ev);
      }
      if (!end || chunk.length === 0) break;
      token = end;
    }
    this.hooks.log(
      `backfill of ${this.room} stopped after ${newestFirst.length} events without reaching ${lastEventId}: older handoffs in the gap, if any, were not ingested`,
    );
    return newestFirst.reverse();
  }

  private allowedSender(ev: RawEvent): boolean {
    if (this.allowed.has(ev.sender)) return true;
    if (!this.rejected.has(ev.sender)) {
      this.rejected.add(ev.sender);
      this.hooks.log(`ignoring events from ${ev.sender}: not in allowedSenders (fail closed)`, 'warn');
    }
    this.drops.note('not_allowed', ev, 'not in allowedSenders');
    return false;
  }

  private announced(ev: RawEvent, events: BusEvent[]): void {
    if (ev.state_key === this.hub.node && ev.sender === this.ownUser) return this.hooks.onOwnAnnouncement(ev.content);
    if (!this.allowedSender(ev)) return;
    const a = readAnnouncement(ev);
    if (typeof a === 'string') return this.drops.note('malformed', ev, `node announcement: ${a}`);
    if (!this.bindings.claim(ev, a.node, a.key, events)) {
      // Our own announcement was overwritten in the room state: put it back for hubs that join later.
      if (a.node === this.hub.node) this.hooks.onOwnNodeClaimed();
      return;
    }
    if (this.crypto && !this.crypto.claims.note(a.node, ev.sender, this.bindings.keyOf(a.node), a.device) && a.device)
      this.hooks.log(
        `node ${a.node} claims device ${a.device.id} without a valid signature by its key: that device is refused`,
        'warn',
      );
    for (const { name, roles } of a.identities) {
      const qualified = `${name}@${a.node}`;
      const known = this.hub.state.identities[qualified];
      if (known && known.roles.join() === roles.join()) continue;
      events.push({ type: 'identity', name: qualified, at: ev.origin_server_ts, roles });
    }
  }

  /** Our own handoff events, for m.read's "up to here" and for people's replies to them. */
  private own(ev: RawEvent, ids: string[]): void {
    this.ownOrder.set(ev.event_id, { order: this.order++, ids });
    if (this.ownOrder.size > OWN_ORDER_KEPT) this.ownOrder.delete(this.ownOrder.keys().next().value!);
  }

  private message(ev: RawEvent, events: BusEvent[], taken: Set<string>): void {
    const c = ev.content;
    const bus = ev.type === MESSAGE_TYPE || ev.type === PROGRESS_TYPE;
    if (bus && (c[HANDOFF_KEY] !== undefined || c[RECEIPT_KEY] !== undefined || c[BATCH_KEY] !== undefined)) {
      if (ev.sender !== this.ownUser && !this.allowedSender(ev)) return;
      const items: BatchItem[] | string =
        c[BATCH_KEY] !== undefined
          ? readBatch(c)
          : c[HANDOFF_KEY] !== undefined
            ? [wireItem('message', readMessage(c), c[HANDOFF_KEY])]
            : [wireItem('receipt', readReceipt(c), c[RECEIPT_KEY])];
      if (typeof items === 'string') return this.drops.note('malformed', ev, items);
      const ownIds: string[] = [];
      for (const item of items) {
        if (item.kind === 'bad') this.drops.note('malformed', ev, item.why);
        else if (!this.concerns(item))
          continue; // between other nodes: not verified, not taken
        else if (!this.signed(ev, item)) continue;
        else if (item.kind === 'message') this.handoff(ev, item.wire, events, taken, ownIds);
        else this.receipt(ev, item.wire, events, taken);
      }
      if (ownIds.length) this.own(ev, ownIds);
      return;
    }
    if (ev.type === REACTION_TYPE) {
      if (!this.allowedSender(ev)) return;
      const r = readReaction(c);
      if (typeof r === 'string') return this.drops.note('meaningless', ev, r);
      return this.person(ev, personReaction(this.people(), ev, r.eventId, r.meaning), events, taken);
    }
    if (ev.type !== MESSAGE_TYPE || !this.allowedSender(ev)) return;
    const reply = readReply(c);
    if (typeof reply === 'string')
      return this.drops.note('meaningless', ev, `a message that is no reply to a handoff (${reply})`);
    this.person(ev, personReply(this.people(), ev, reply), events, taken);
  }

  /**
   * Whether an item is this node's business: its own, a handoff with a recipient here, or a receipt
   * for a handoff it holds. Every hub reads the whole room; checking a signature on the rest was
   * half of what another node's traffic cost it.
   */
  private concerns(item: Exclude<BatchItem, { kind: 'bad' }>): boolean {
    const node = this.hub.node;
    if (item.kind === 'message')
      return item.wire.node === node || item.wire.to.some((q) => q.slice(q.indexOf('@') + 1) === node);
    return item.wire.node !== node && this.hub.state.hot[item.wire.message_id] !== undefined;
  }

  /** A node with an announced key speaks only with its signature: the account alone may be shared. */
  private signed(ev: RawEvent, item: Exclude<BatchItem, { kind: 'bad' }>): boolean {
    const node = item.wire.node;
    const key = this.bindings.keyOf(node);
    if (!key || !this.bindings.speaksFor(node, ev.sender) || verifyWire(key, item.raw)) return true; // unbound: refused below, by account
    const what =
      item.kind === 'message'
        ? `handoff ${item.wire.id} from ${item.wire.from}`
        : `${item.wire.kind} receipt for ${item.wire.message_id} by ${item.wire.by}`;
    this.drops.note('bad_signature', ev, `${what} is not signed by node ${node}'s announced key`);
    return false;
  }

  private handoff(ev: RawEvent, w: WireMessage, events: BusEvent[], taken: Set<string>, ownIds: string[]): void {
    if (!this.bindings.speaksFor(w.node, ev.sender)) {
      const bound = this.bindings.boundTo(w.node);
      return this.drops.note(
        'forged_node',
        ev,
        `handoff ${w.id} claims to come from ${w.from}, but node ${w.node} speaks only through ${bound ?? 'the account that announces it (none yet)'}`,
      );
    }
    if (w.node === this.hub.node) {
      ownIds.push(w.id);
      return;
    }
    if (taken.has(w.id) || this.hub.knows(w.id)) return;
    const m = localMessage(w, this.hub.node, ev, this.room);
    if (!m) return;
    taken.add(w.id);
    events.push({ type: 'sent', message: m });
  }

  private receipt(ev: RawEvent, w: WireReceipt, events: BusEvent[], taken: Set<string>): void {
    const node = this.hub.node;
    if (!this.bindings.speaksFor(w.node, ev.sender)) {
      const bound = this.bindings.boundTo(w.node);
      return this.drops.note(
        'forged_node',
        ev,
        `${w.kind} receipt for ${w.message_id} claims to be by ${w.by}, but node ${w.node} speaks only through ${bound ?? 'the account that announces it (none yet)'}`,
      );
    }
    if (w.node === node) return;
    // Only for a handoff this node sent, and only from one of its recipients (G3).
    const key = `${w.message_id}\n${w.by}\n${w.kind}\n${w.session}\n${w.at}`;
    if (taken.has(key)) return;
    const e = remoteReceiptEvent(this.hub.state, w, node);
    if (e === 'not_a_recipient')
      return this.drops.note('not_a_recipient', ev, `${w.by} is not a recipient of ${w.message_id}`);
    if (!e) return;
    taken.add(key);
    events.push(e);
  }

  private people(): PeopleContext {
    return {
      state: this.hub.state,
      room: this.room,
      defaultSlaMs: this.hub.limits.defaultSlaMs,
      defaultTtlMs: this.hub.limits.defaultTtlMs,
      handoffsAt: (eventId) => {
        const ids = new Set(this.ownOrder.get(eventId)?.ids ?? []);
        for (const h of Object.values(this.hub.state.hot)) if (h.relayed?.eventId === eventId) ids.add(h.message.id);
        return [...ids].map((id) => this.hub.state.hot[id]).filter((h) => !!h);
      },
    };
  }

  private person(ev: RawEvent, outcome: PersonOutcome, events: BusEvent[], taken: Set<string>): void {
    if ('drop' in outcome) return this.drops.note(outcome.drop, ev, outcome.why);
    for (const e of outcome.events) {
      if (e.type === 'sent') {
        if (taken.has(e.message.id) || this.hub.knows(e.message.id)) continue;
        taken.add(e.message.id);
      } else if (e.type === 'identity') {
        if (taken.has(`identity\n${e.name}`)) continue;
        taken.add(`identity\n${e.name}`);
      } else if (e.type === 'receipt') {
        const key = `${e.id}\n${e.receipt.session}\n${e.receipt.kind}`;
        if (taken.has(key)) continue;
        taken.add(key);
      }
      events.push(e);
    }
    this.hooks.log(
      `${ev.sender} in the room: ${
        outcome.events
          .filter((e) => e.type !== 'identity')
          .map((e) =>
            e.type === 'sent'
              ? `handoff ${e.message.id} to ${e.message.recipients.join(', ')}`
              : e.type === 'receipt'
                ? `${e.receipt.kind} of ${e.id}`
                : e.type,
          )
          .join('; ') || 'nothing new'
      }`,
    );
  }

  /** m.read receipts: real ones only (the homeserver's m.receipt), advisory, per Matrix user. */
  private readMarkers(content: unknown): void {
    const byEvent = new Map<string, string[]>();
    for (const h of Object.values(this.hub.state.hot))
      if (h.relayed) byEvent.set(h.relayed.eventId, [...(byEvent.get(h.relayed.eventId) ?? []), h.message.id]);
    for (const [eventId, kinds] of Object.entries(
      (content ?? {}) as Record<string, Record<string, Record<string, { ts?: number }>>>,
    )) {
      for (const [user, r] of Object.entries(kinds?.['m.read'] ?? {})) {
        if (!this.allowed.has(user)) continue;
        const upTo = this.ownOrder.get(eventId)?.order;
        const ids =
          upTo === undefined
            ? (byEvent.get(eventId) ?? [])
            : [...byEvent].filter(([e]) => (this.ownOrder.get(e)?.order ?? Infinity) <= upTo).flatMap(([, ids]) => ids);
        for (const id of ids) {
          const reads = this.reads.get(id) ?? [];
          if (!reads.some((x) => x.user === user))
            reads.push({ user, at: typeof r?.ts === 'number' ? r.ts : Date.now() });
          this.reads.set(id, reads);
        }
      }
    }
  }
}

function wireItem(kind: 'message', w: WireMessage | string, raw: unknown): BatchItem;
function wireItem(kind: 'receipt', w: WireReceipt | string, raw: unknown): BatchItem;
function wireItem(kind: 'message' | 'receipt', w: WireMessage | WireReceipt | string, raw: unknown): BatchItem {
  if (typeof w === 'string') return { kind: 'bad', why: w };
  return kind === 'message' ? { kind, wire: w as WireMessage, raw } : { kind: 'receipt', wire: w as WireReceipt, raw };
}

// Reads the room: a long-poll /sync from the persisted position, gaps (limited syncs) backfilled
// through /messages back to the last event this hub ingested, and each sync's events committed
// in one journal record together with the new position — so after a crash or an outage nothing
// is skipped and nothing is taken twice. Messages are idempotent by id as well: a txnId replayed
// past the homeserver's dedupe window makes a second event with the same message id.
import { dict } from '../bus/dict';
import type { BusEvent } from '../bus/model';
import { isRemote, localize } from '../bus/relay';
import type { Hub } from '../hub';
import type { AdvisoryRead } from '../../protocol/views';
import { classify, type Homeserver, type JoinedRoom, type RawEvent, type SyncResponse } from './homeserver';
import { localMessage, NODE_STATE, readAnnouncement, readMessage, readReceipt, HANDOFF_KEY, RECEIPT_KEY } from './wire';

const POLL_MS = 30_000;
const MAX_BACKOFF_MS = 2000;
const BACKFILL_PAGE = 100;
const BACKFILL_MAX_PAGES = 100;
/** Own events remembered for m.read's "up to here"; older ones match only exactly. */
const OWN_ORDER_KEPT = 10_000;

export interface IngestHooks {
  log: (line: string) => void;
  onTrouble: (why: string, refused: boolean) => void;
  onSynced: () => void;
}

export class Ingest {
  private readonly abort = new AbortController();
  /** Our own handoff events in timeline order, for m.read's "read up to here" (this run only). */
  private readonly ownOrder = new Map<string, number>();
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
    private readonly timelineLimit: number,
    private readonly hooks: IngestHooks,
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
    while (!this.abort.signal.aborted) {
      const since = this.restart ? undefined : this.hub.state.relay?.since;
      let res: SyncResponse;
      try {
        res = await this.hs.sync(since, filter, since ? POLL_MS : 0, this.abort.signal);
      } catch (e) {
        if (this.abort.signal.aborted) return;
        const f = classify(e);
        if (f.status === 400 && since) {
          this.hooks.log(`the homeserver refused the saved sync position (${f.why}); starting from its present state`);
          this.restart = true;
          continue;
        }
        this.hooks.onTrouble(f.why, f.kind === 'refused');
        await this.pause(f.kind === 'retry' && f.afterMs !== undefined ? f.afterMs : f.kind === 'refused' ? 10_000 : Math.min(100 * 2 ** failures++, MAX_BACKOFF_MS));
        continue;
      }
      failures = 0;
      try {
        await this.take(res);
        this.restart = false;
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
      this.abort.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }

  /**
   * One sync response → one commit. The first time this hub reads the room its history is not
   * taken: handoffs from before this node announced its identities cannot be addressed to it.
   * After that, a gap — a limited sync, or a fresh one because the saved position was refused —
   * is backfilled back to the last event taken.
   */
  private async take(res: SyncResponse): Promise<void> {
    const joined: JoinedRoom | undefined = res.rooms?.join?.[this.room];
    const events: BusEvent[] = [];
    let lastEventId: string | undefined;
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
      for (const ev of [...(joined.state?.events ?? []), ...timeline.filter((e) => e.state_key !== undefined)]) {
        if (ev.type === NODE_STATE) this.announced(ev, events);
      }
      const taken = new Set<string>();
      for (const ev of timeline) {
        if (ev.type === 'm.room.message' && !first) this.message(ev, events, taken);
      }
      lastEventId = timeline.at(-1)?.event_id;
      for (const e of joined.ephemeral?.events ?? []) if (e.type === 'm.receipt') this.readMarkers(e.content);
    }
    events.push({ type: 'synced', since: res.next_batch, room: this.room, lastEventId });
    await this.hub.applyRemote(events);
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
    this.hooks.log(`backfill of ${this.room} stopped after ${newestFirst.length} events without reaching ${lastEventId}: older handoffs in the gap, if any, were not ingested`);
    return newestFirst.reverse();
  }

  private allowedSender(ev: RawEvent): boolean {
    if (this.allowed.has(ev.sender)) return true;
    if (!this.rejected.has(ev.sender)) {
      this.rejected.add(ev.sender);
      this.hooks.log(`ignoring events from ${ev.sender}: not in allowedSenders (fail closed)`);
    }
    return false;
  }

  private announced(ev: RawEvent, events: BusEvent[]): void {
    if (ev.state_key === this.hub.node || !this.allowedSender(ev)) return;
    const a = readAnnouncement(ev);
    if (typeof a === 'string') return this.hooks.log(`ignoring node announcement ${ev.event_id} from ${ev.sender}: ${a}`);
    for (const { name, roles } of a.identities) {
      const qualified = `${name}@${a.node}`;
      const known = this.hub.state.identities[qualified];
      if (known && known.roles.join() === roles.join()) continue;
      events.push({ type: 'identity', name: qualified, at: ev.origin_server_ts, roles });
    }
  }

  private message(ev: RawEvent, events: BusEvent[], taken: Set<string>): void {
    const node = this.hub.node;
    if (ev.content[HANDOFF_KEY]) {
      const w = readMessage(ev.content);
      if (typeof w === 'string') return this.hooks.log(`ignoring handoff event ${ev.event_id}: ${w}`);
      if (w.node === node) {
        this.ownOrder.set(ev.event_id, this.order++);
        if (this.ownOrder.size > OWN_ORDER_KEPT) this.ownOrder.delete(this.ownOrder.keys().next().value!);
        return;
      }
      if (!this.allowedSender(ev) || taken.has(w.id) || this.hub.knows(w.id)) return;
      const m = localMessage(w, node, ev, this.room);
      if (!m) return;
      taken.add(w.id);
      events.push({ type: 'sent', message: m });
    } else if (ev.content[RECEIPT_KEY]) {
      const w = readReceipt(ev.content);
      if (typeof w === 'string') return this.hooks.log(`ignoring receipt event ${ev.event_id}: ${w}`);
      if (w.node === node || !this.allowedSender(ev)) return;
      const hot = this.hub.state.hot[w.message_id];
      // Only for a handoff this node sent, and only from one of its recipients (G3).
      if (!hot || localize(w.sender, node) !== hot.message.from || isRemote(hot.message.from)) return;
      const d = hot.deliveries[w.by];
      if (!d) return this.hooks.log(`ignoring receipt ${ev.event_id}: ${w.by} is not a recipient of ${w.message_id}`);
      const key = `${w.message_id}\n${w.by}\n${w.kind}\n${w.session}\n${w.at}`;
      if (taken.has(key) || d.receipts.some((r) => r.kind === w.kind && r.session === w.session && r.at === w.at)) return;
      taken.add(key);
      events.push({
        type: 'receipt', id: w.message_id, recipient: w.by,
        receipt: { kind: w.kind, by: w.by, session: w.session, node: w.node, at: w.at, outcome: w.outcome, summary: w.summary },
      });
    }
  }

  /** m.read receipts: real ones only (the homeserver's m.receipt), advisory, per Matrix user. */
  private readMarkers(content: unknown): void {
    const byEvent = new Map<string, string>();
    for (const h of Object.values(this.hub.state.hot)) if (h.relayed) byEvent.set(h.relayed.eventId, h.message.id);
    for (const [eventId, kinds] of Object.entries((content ?? {}) as Record<string, Record<string, Record<string, { ts?: number }>>>)) {
      for (const [user, r] of Object.entries(kinds?.['m.read'] ?? {})) {
        if (!this.allowed.has(user)) continue;
        const upTo = this.ownOrder.get(eventId);
        const ids = upTo === undefined
          ? [byEvent.get(eventId)]
          : [...byEvent].filter(([e]) => (this.ownOrder.get(e) ?? Infinity) <= upTo).map(([, id]) => id);
        for (const id of ids) {
          if (!id) continue;
          const reads = this.reads.get(id) ?? [];
          if (!reads.some((x) => x.user === user)) reads.push({ user, at: typeof r?.ts === 'number' ? r.ts : Date.now() });
          this.reads.set(id, reads);
        }
      }
    }
  }
}

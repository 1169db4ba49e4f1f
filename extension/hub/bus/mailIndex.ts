// Which open messages each identity has, which of them still wait for its ACK, which it has not
// read, and which a hook may still hand its sessions: derived from the state, kept in memory and
// updated as the journal moves, so the questions asked on every tool result (the unacked footer,
// an inbox page, the unread summary) and by every hook cost the page, not the identity's open mail
// (docs/performance.md, "The footer").
import { awaitingAck, isUnread } from './deliveryState';
import type { BusEvent, BusState, HotMessage, Message, Surfacing } from './model';
import { isTerminal } from './reduce';
import { bySeq, SeqList } from './seqList';

type Member = (hot: HotMessage | undefined, identity: string) => hot is HotMessage;

/** In the identity's inbox: addressed to it, not resolved, its delivery not done, stuck or failed. */
const isOpenFor: Member = (hot, identity): hot is HotMessage => {
  const d = hot?.deliveries[identity];
  return !!d && !hot!.resolution && !isTerminal(d.state);
};

/** Still needs the identity's ACK (or result). */
const isUnackedBy: Member = (hot, identity): hot is HotMessage =>
  isOpenFor(hot, identity) && hot.message.requiresAck && awaitingAck(hot.deliveries[identity]);

/** Not ACKed, asked or not: a hook hands it to each of the identity's sessions once (bus/surfacing.ts). */
const isWaitingFor: Member = (hot, identity): hot is HotMessage =>
  isOpenFor(hot, identity) && awaitingAck(hot.deliveries[identity]);

/** The lists a message is in for one of its recipients (`listsOf`): what a checkpoint's index keeps of it. */
const IN_OPEN = 1;
const IN_UNACKED = 2;
const IN_UNASKED = 4;
const IN_UNREAD = 8;
/** Waiting: unacked or unasked. */
const WAITING = IN_UNACKED | IN_UNASKED;

/** Which of the identity's lists the message belongs in now. */
export function listsOf(hot: HotMessage, identity: string): number {
  if (!isOpenFor(hot, identity)) return 0;
  const d = hot.deliveries[identity];
  const waiting = awaitingAck(d);
  return (
    IN_OPEN |
    (waiting && hot.message.requiresAck ? IN_UNACKED : 0) |
    (waiting && !hot.message.requiresAck ? IN_UNASKED : 0) |
    (isUnread(d) ? IN_UNREAD : 0)
  );
}

/** What a checkpoint's index gives back of one open message for one recipient (store/openIndex.ts). */
export interface ListedFor {
  identity: string;
  lists: number;
  /** Where its waiting handoff was surfaced: kept only while it waits. */
  seen: Pick<Surfacing, 'session' | 'cliSession'>[];
}

export interface UnackedSummary {
  count: number;
  /** The oldest few, oldest first. */
  oldest: HotMessage[];
}

export class MailIndex {
  private readonly open = new Map<string, SeqList>();
  private readonly unacked = new Map<string, SeqList>();
  /**
   * The waiting handoffs are the unacked and these, walked together in seq order: most mail asks
   * for an ACK, and a list of its own for waiting held each of those twice.
   */
  private readonly unasked = new Map<string, SeqList>();
  /** Only ever counted; a list all the same, since two array slots cost less than a set's slot. */
  private readonly unread = new Map<string, SeqList>();
  /** identity → session → of its waiting handoffs, those already in that session's model context. */
  private readonly seen = new Map<string, Map<string, SeqList>>();
  /** `${identity}\n${cliSession}` → the agent session that CLI session's hooks surface into, as the surfacings recorded. */
  private readonly agentSessions = new Map<string, string>();
  /** `${identity}\n${session}` → every waiting handoff up to this seq is seen there: a hook's walk starts after it. */
  private readonly floors = new Map<string, number>();
  /** The lists `follow` keeps by membership, built once: it runs for every recipient of every event. */
  private readonly kept = [
    [this.open, IN_OPEN],
    [this.unacked, IN_UNACKED],
    [this.unasked, IN_UNASKED],
    [this.unread, IN_UNREAD],
  ] as const;

  static of(state: BusState): MailIndex {
    const index = new MailIndex();
    for (const hot of Object.values(state.hot).sort((a, b) => a.message.seq - b.message.seq))
      index.follow(state, hot.message.id);
    return index;
  }

  /**
   * As a checkpoint's index lists its open messages, each with its lists per recipient as of the
   * checkpoint (`listsOf`), without the messages: what `of` would build from them.
   */
  static restored(messages: Iterable<{ id: string; seq: number; listed: ListedFor[] }>): MailIndex {
    const index = new MailIndex();
    for (const { id, seq, listed } of messages)
      for (const { identity, lists, seen } of listed) {
        for (const [kept, bit] of index.kept) if (lists & bit) index.list(kept, identity).add(id, seq);
        if (lists & WAITING) for (const s of seen) index.markSeen(identity, s, id, seq);
      }
    return index;
  }

  /**
   * A message changed since the index was restored: in or out of each recipient's lists as its
   * state now says, and seen wherever it was surfaced while it waits (`follow` marks them only
   * when it starts waiting; a surfacing the journal added since would be missed).
   */
  refresh(state: BusState, id: string): void {
    this.follow(state, id);
    const hot = state.hot[id];
    if (!hot) return;
    for (const r of hot.message.recipients)
      if (isWaitingFor(hot, r))
        for (const s of hot.deliveries[r].surfacings ?? []) this.markSeen(r, s, id, hot.message.seq);
  }

  private list<K>(lists: Map<K, SeqList>, key: K): SeqList {
    let l = lists.get(key);
    if (!l) lists.set(key, (l = new SeqList()));
    return l;
  }

  private seenBy(identity: string): Map<string, SeqList> {
    let m = this.seen.get(identity);
    if (!m) this.seen.set(identity, (m = new Map()));
    return m;
  }

  /** Puts the message in, or takes it out of, each recipient's lists as its state now says. */
  private follow(state: BusState, id: string, only?: string): void {
    const hot = state.hot[id];
    if (!hot) return;
    for (const r of only !== undefined ? [only] : hot.message.recipients) {
      const seq = hot.message.seq;
      const was = this.isWaiting(r, id, seq);
      const lists = listsOf(hot, r);
      for (const [kept, bit] of this.kept) {
        if (lists & bit) this.list(kept, r).add(id, seq);
        else kept.get(r)?.delete(id, seq);
      }
      const waiting = (lists & WAITING) !== 0;
      if (waiting && !was) {
        for (const s of hot.deliveries[r].surfacings ?? []) this.markSeen(r, s, id, seq);
      } else if (!waiting && was) this.unwait(r, id, seq);
    }
  }

  private markSeen(identity: string, s: Pick<Surfacing, 'session' | 'cliSession'>, id: string, seq: number): void {
    this.list(this.seenBy(identity), s.session).add(id, seq);
    if (s.cliSession) this.agentSessions.set(`${identity}\n${s.cliSession}`, s.session);
  }

  /** The agent MCP session a CLI session's hooks surfaced the identity's waiting handoffs into, if any. */
  agentSessionOf(identity: string, cliSession: string): string | undefined {
    return this.agentSessions.get(`${identity}\n${cliSession}`);
  }

  /** Ids of the identity's waiting handoffs already in `session`'s model context. */
  seenInSession(identity: string, session: string): string[] {
    return [...(this.seen.get(identity)?.get(session)?.entries() ?? [])].map(([id]) => id);
  }

  /** The waiting list that holds the handoff for the identity, if one does. */
  private isWaiting(identity: string, id: string, seq: number): boolean {
    return [this.unacked, this.unasked].some((lists) => lists.get(identity)?.has(id, seq));
  }

  private waitingCount(identity: string): number {
    return (this.unacked.get(identity)?.size ?? 0) + (this.unasked.get(identity)?.size ?? 0);
  }

  private unwait(identity: string, id: string, seq: number): void {
    this.unacked.get(identity)?.delete(id, seq);
    this.unasked.get(identity)?.delete(id, seq);
    const sessions = this.seen.get(identity);
    for (const [session, list] of sessions ?? []) {
      list.delete(id, seq);
      if (list.size > 0) continue;
      sessions!.delete(session);
      for (const [k, to] of this.agentSessions)
        if (to === session && k.startsWith(`${identity}\n`)) this.agentSessions.delete(k);
      this.floors.delete(`${identity}\n${session}`); // nothing seen left below it: walking from the start costs the same
    }
  }

  /**
   * Follows the journal, after the events are applied. Pushes change no list; a surfacing marks
   * the handoff seen in its session; remote deliveries a relay failure ended are dropped lazily,
   * when a walk meets them.
   */
  note(state: BusState, events: BusEvent[]): void {
    for (const e of events) {
      if (e.type === 'sent') this.follow(state, e.message.id);
      else if (e.type === 'receipt' || e.type === 'failed') this.follow(state, e.id, e.recipient);
      else if (e.type === 'resolved') this.follow(state, e.id);
      else if (e.type === 'surfaced') {
        const seq = state.hot[e.id]?.message.seq;
        if (seq !== undefined && this.isWaiting(e.recipient, e.id, seq))
          this.markSeen(e.recipient, e.surfacing, e.id, seq);
      }
    }
  }

  /** Messages archived at a checkpoint leave `state.hot` without an event: out of every list. */
  forget(archived: readonly Pick<Message, 'id' | 'seq'>[]): void {
    for (const identity of this.seen.keys())
      for (const { id, seq } of archived) if (this.isWaiting(identity, id, seq)) this.unwait(identity, id, seq);
    for (const lists of [this.open, this.unacked, this.unasked, this.unread])
      for (const list of lists.values()) for (const { id, seq } of archived) list.delete(id, seq);
  }

  /** The identity's open mail after `afterSeq`, oldest first, that `keep` accepts, up to `limit`. */
  openFor(
    state: BusState,
    identity: string,
    opts: { afterSeq?: number; limit?: number; keep?: (hot: HotMessage) => boolean } = {},
  ): HotMessage[] {
    return this.walk(state, this.open.get(identity), identity, isOpenFor, opts);
  }

  /** The identity's newest open mail, newest first, up to `limit` (a person's inbox in the editor). */
  newestFor(state: BusState, identity: string, limit: number): HotMessage[] {
    const out: HotMessage[] = [];
    const list = this.open.get(identity);
    for (const [id, seq] of list?.newest() ?? []) {
      if (out.length >= limit) break;
      const hot = state.hot[id];
      if (isOpenFor(hot, identity)) out.push(hot);
      else list!.delete(id, seq);
    }
    return out;
  }

  /** Of `ids`, those open for the identity, oldest first: a tool result that shows a page costs the page. */
  openAmong(state: BusState, identity: string, ids: Iterable<string>): HotMessage[] {
    const out: HotMessage[] = [];
    for (const id of ids) {
      const hot = state.hot[id];
      if (isOpenFor(hot, identity)) out.push(hot);
    }
    return out.sort((a, b) => a.message.seq - b.message.seq);
  }

  /** How many open handoffs wait for the identity's ACK, and the oldest `k`. */
  unackedSummary(state: BusState, identity: string, k: number): UnackedSummary {
    const list = this.unacked.get(identity);
    const oldest = this.walk(state, list, identity, isUnackedBy, { limit: k });
    return { count: list?.size ?? 0, oldest };
  }

  /** Whether a handoff waits for the identity (not ACKed, asked for or not): a hook may have one to hand. */
  hasWaiting(identity: string): boolean {
    return (this.unacked.get(identity)?.size ?? 0) + (this.unasked.get(identity)?.size ?? 0) > 0;
  }

  /** How many open handoffs the identity has not read. */
  unreadCount(identity: string): number {
    return this.unread.get(identity)?.size ?? 0;
  }

  /** Every open handoff the identity has not ACKed, oldest first (a reconnect's replay). */
  unackedFor(state: BusState, identity: string): HotMessage[] {
    return this.walk(state, this.unacked.get(identity), identity, isUnackedBy, {});
  }

  /**
   * What a hook may hand `session` now: the oldest `limit` waiting handoffs not yet seen there nor
   * `claimed` (in flight to it), and how many there are in all. The walk starts at the session's
   * floor, so the handoffs it was handed before are not walked again on every hook.
   */
  unsurfaced(
    state: BusState,
    identity: string,
    session: string,
    claimed: ReadonlySet<string>,
    limit: number,
  ): { items: HotMessage[]; count: number } {
    const seen = this.seen.get(identity)?.get(session);
    const key = `${identity}\n${session}`;
    let floor = this.floors.get(key) ?? 0;
    let gap = false;
    const items: HotMessage[] = [];
    for (const { id, seq } of bySeq(this.unacked.get(identity), this.unasked.get(identity), floor)) {
      if (items.length >= limit) break;
      if (seen?.has(id, seq)) {
        if (!gap) floor = seq;
        continue;
      }
      const hot = state.hot[id];
      if (!isWaitingFor(hot, identity)) {
        this.unwait(identity, id, seq);
        continue;
      }
      gap = true;
      if (!claimed.has(id)) items.push(hot);
    }
    if (floor > 0 && seen) this.floors.set(key, floor);
    let claimedHere = 0;
    for (const id of claimed) {
      const seq = state.hot[id]?.message.seq;
      if (seq !== undefined && this.isWaiting(identity, id, seq) && !seen?.has(id, seq)) claimedHere++;
    }
    return { items, count: this.waitingCount(identity) - (seen?.size ?? 0) - claimedHere };
  }

  private walk(
    state: BusState,
    list: SeqList | undefined,
    identity: string,
    member: Member,
    opts: { afterSeq?: number; limit?: number; keep?: (hot: HotMessage) => boolean },
  ): HotMessage[] {
    const out: HotMessage[] = [];
    if (!list) return out;
    const limit = opts.limit ?? Infinity;
    for (const [id, seq] of list.entries(opts.afterSeq)) {
      if (out.length >= limit) break;
      const hot = state.hot[id];
      if (!member(hot, identity)) list.delete(id, seq);
      else if (!opts.keep || opts.keep(hot)) out.push(hot);
    }
    return out;
  }
}

// Which open messages each identity has, and which of them still wait for its ACK: derived from
// the state, kept in memory and updated as the journal moves, so the questions asked on every
// tool result (the unacked footer, an inbox page) cost the page, not the identity's open mail.
// A measured failure: the footer scanned every unread message on every tool result, and one
// sender's send_handoff went from 0.73 to 3.41 ms with 10 000 unread.
import { awaitingAck } from './ledger';
import type { BusEvent, BusState, HotMessage } from './model';
import { isTerminal } from './reduce';
import { SeqList } from './seqList';

/** In the identity's inbox: addressed to it, not resolved, its delivery not done, stuck or failed. */
function isOpenFor(hot: HotMessage | undefined, identity: string): hot is HotMessage {
  const d = hot?.deliveries[identity];
  return !!d && !hot!.resolution && !isTerminal(d.state);
}

/** Still needs the identity's ACK (or result). */
function isUnackedBy(hot: HotMessage | undefined, identity: string): hot is HotMessage {
  const d = hot?.deliveries[identity];
  return !!d && !hot!.resolution && hot!.message.requiresAck && awaitingAck(d);
}

export interface UnackedSummary {
  count: number;
  /** The oldest few, oldest first. */
  oldest: HotMessage[];
}

export class MailIndex {
  private readonly open = new Map<string, SeqList>();
  private readonly unacked = new Map<string, SeqList>();

  static of(state: BusState): MailIndex {
    const index = new MailIndex();
    for (const hot of Object.values(state.hot).sort((a, b) => a.message.seq - b.message.seq)) index.follow(state, hot.message.id);
    return index;
  }

  private list(lists: Map<string, SeqList>, identity: string): SeqList {
    let l = lists.get(identity);
    if (!l) lists.set(identity, (l = new SeqList()));
    return l;
  }

  /** Puts the message in, or takes it out of, each recipient's lists as its state now says. */
  private follow(state: BusState, id: string, only?: string): void {
    const hot = state.hot[id];
    for (const r of only !== undefined ? [only] : hot?.message.recipients ?? []) {
      if (isOpenFor(hot, r)) this.list(this.open, r).add(id, hot.message.seq);
      else this.open.get(r)?.delete(id);
      if (isUnackedBy(hot, r)) this.list(this.unacked, r).add(id, hot.message.seq);
      else this.unacked.get(r)?.delete(id);
    }
  }

  /**
   * Follows the journal, after the events are applied. Pushes and surfacings change neither list;
   * messages archived at a checkpoint (settled) and remote deliveries a relay failure ended are
   * dropped lazily, when a walk meets them.
   */
  note(state: BusState, events: BusEvent[]): void {
    for (const e of events) {
      if (e.type === 'sent') this.follow(state, e.message.id);
      else if (e.type === 'receipt' || e.type === 'failed') this.follow(state, e.id, e.recipient);
      else if (e.type === 'resolved') this.follow(state, e.id);
    }
  }

  /** The identity's open mail after `afterSeq`, oldest first, that `keep` accepts, up to `limit`. */
  openFor(state: BusState, identity: string, opts: { afterSeq?: number; limit?: number; keep?: (hot: HotMessage) => boolean } = {}): HotMessage[] {
    return this.walk(state, this.open.get(identity), identity, isOpenFor, opts);
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

  /** Every open handoff the identity has not ACKed, oldest first (a reconnect's replay). */
  unackedFor(state: BusState, identity: string): HotMessage[] {
    return this.walk(state, this.unacked.get(identity), identity, isUnackedBy, {});
  }

  private walk(state: BusState, list: SeqList | undefined, identity: string, member: typeof isOpenFor, opts: { afterSeq?: number; limit?: number; keep?: (hot: HotMessage) => boolean }): HotMessage[] {
    const out: HotMessage[] = [];
    if (!list) return out;
    const limit = opts.limit ?? Infinity;
    for (const id of list.ids(opts.afterSeq)) {
      if (out.length >= limit) break;
      const hot = state.hot[id];
      if (!member(hot, identity)) list.delete(id);
      else if (!opts.keep || opts.keep(hot)) out.push(hot);
    }
    return out;
  }
}

// Pushes: writing a handoff to live sessions — once per message per connection (G2), replays on
// attach, chases — and journaling each push. The bus decides what is owed; this writes it.
import { withBody } from '../bus/body';
import type { BusEvent, HotMessage, Message, PushKind } from '../bus/model';
import { REPLAY_BYTES } from './budgets';
import { renderMessage } from './render';
import { sessionLabel, type Session, type SessionRegistry } from '../presence/sessions';
import type { Log } from '../../protocol/hubLog';

export interface PushesDeps {
  node: string;
  sessions: SessionRegistry;
  now: () => number;
  /** The hub's one commit path; a push record that cannot be written is logged, the push stands. */
  commit: (events: BusEvent[]) => Promise<void>;
  /** The identity's open mail still waiting for its ACK, oldest first. */
  unackedOf: (identity: string) => HotMessage[];
  isOpen: (id: string) => boolean;
  /** The open message by id, as the store holds it once committed. */
  hotOf: (id: string) => HotMessage | undefined;
  log: Log;
  /** Unacked messages replayed on attach at most; the bound is in bytes (REPLAY_BYTES), this caps the count too. */
  replayLimit: number;
  /** A new message reached its recipients' live sessions (or found none): attention takes over. */
  arrived: (identities: readonly string[]) => void;
}

const MAX_CUT_KEYS = 1024;

export class Pushes {
  /**
   * `${identity}\n${id}` for every message pushed to some session of the identity. Kept in memory
   * and set at push time, because the journaled push record lands a moment later and a session
   * reconnecting in between must still get the message flagged as a replay.
   */
  private readonly pushedToIdentity = new Set<string>();
  private pruneAt = 4096;
  /**
   * Session keys whose connection was closed because it stopped reading: what was pushed to them
   * may be lost in the queue dropped with it, so their next attach replays it even if resumed.
   */
  private readonly cut = new Set<string>();
  /** Pushes written to connections, counted (benchmarks and tests read it). */
  written = 0;

  constructor(private readonly deps: PushesDeps) {}

  /** At most one push per message per connection, except an explicit chase. */
  pushTo(session: Session, hot: HotMessage, kind: PushKind, text?: string): boolean {
    const m = hot.message;
    if (kind !== 'chase' && session.pushed.has(m.id)) return false;
    if (
      !session.deliver({
        id: m.id,
        from: m.from,
        thread: m.thread,
        kind,
        text: text ?? renderMessage(withBody(m), kind),
      })
    )
      return false;
    session.pushed.add(m.id);
    this.pushedToIdentity.add(`${session.identity}\n${m.id}`);
    this.written++;
    this.deps
      .commit([
        {
          type: 'pushed',
          id: m.id,
          recipient: session.identity,
          push: { session: session.key, node: this.deps.node, at: this.deps.now(), kind },
        },
      ])
      .catch((e) => this.deps.log(`could not record a push of ${m.id}: ${(e as Error).message}`, 'error'));
    return true;
  }

  /** The chases among committed events, to every live session of each chased recipient; how many were written to. */
  chased(events: BusEvent[]): number {
    let n = 0;
    for (const e of events) {
      if (e.type !== 'chased') continue;
      const hot = this.deps.hotOf(e.id);
      if (hot) n += this.toIdentity(e.recipient, hot, 'chase');
    }
    return n;
  }

  /** To every live session of the identity; how many were written to. */
  toIdentity(identity: string, hot: HotMessage, kind: PushKind): number {
    let n = 0;
    for (const s of this.deps.sessions.forIdentity(identity)) if (this.pushTo(s, hot, kind)) n++;
    return n;
  }

  /**
   * The one way new messages enter the bus — sent here, escalated by the timer, or taken from
   * another node: the `sent` events in `events` are committed with the intent to push each to its
   * recipients' live sessions (so after a crash nothing that may have been pushed is pushed again
   * as new), with whatever rides along in the same record; once durable, `beforeArrive` runs and
   * each new message is pushed. Sessions reached, by message id and recipient.
   */
  async admit(
    events: BusEvent[],
    o: { committing?: (p: Promise<void>) => void; beforeArrive?: (admitted: HotMessage[]) => void } = {},
  ): Promise<Map<string, Map<string, number>>> {
    const sent = events.flatMap((e) => (e.type === 'sent' ? [e.message] : []));
    const committing = this.deps.commit([...events, ...sent.flatMap((m) => this.offers(m))]);
    o.committing?.(committing);
    await committing;
    const admitted = sent.flatMap((m) => this.deps.hotOf(m.id) ?? []);
    o.beforeArrive?.(admitted);
    return new Map(admitted.map((hot) => [hot.message.id, this.pushNew(hot)]));
  }

  /** The push intent for a new message: one `offered` per recipient with a live session, to commit with the message itself. */
  private offers(m: Message): BusEvent[] {
    const at = this.deps.now();
    const live = (r: string) => this.deps.sessions.forIdentity(r).some((s) => s.isOpen());
    return m.recipients.filter(live).map((recipient) => ({ type: 'offered', id: m.id, recipient, at }));
  }

  /** A new message to every live session of each local recipient; sessions reached by recipient. */
  private pushNew(hot: HotMessage): Map<string, number> {
    const reached = new Map<string, number>();
    for (const r of hot.message.recipients) reached.set(r, this.toIdentity(r, hot, 'live'));
    this.deps.arrived(hot.message.recipients);
    return reached;
  }

  /**
   * Unacked mail to a (re)attached session, bounded in bytes (REPLAY_BYTES, the notice included).
   * Mail this identity has never been pushed goes first, in FIFO order; then replays of what it was
   * pushed before, flagged `replayed`, fewest pushes to this session key first — a push to a
   * connection that died right after it is the likeliest to have gone unread, and the bound rotates
   * through the rest over reconnects. Past the bound, one notice says how many more wait and how to
   * page the inbox: a flood of 10 000 reaches the model as a screenful, not as 600 MiB of pushes.
   */
  async replay(session: Session): Promise<void> {
    const holds = session.resumed === true && !this.cut.delete(session.key);
    const seen = (hot: HotMessage) => {
      const d = hot.deliveries[session.identity];
      return (
        this.pushedToIdentity.has(`${session.identity}\n${hot.message.id}`) ||
        d.pushes.length > 0 ||
        d.offeredAt !== undefined
      );
    };
    const waiting = this.deps.unackedOf(session.identity).filter((h) => !session.pushed.has(h.message.id));
    const fresh = waiting.filter((h) => !seen(h));
    const pushesTo = (h: HotMessage) =>
      h.deliveries[session.identity].pushes.filter((p) => p.session === session.key).length;
    // A resumed session's client holds what was pushed to its key: pushing it again is noise.
    const again = waiting
      .filter((h) => seen(h) && !(holds && pushesTo(h) > 0))
      .map((h) => ({ h, n: pushesTo(h) }))
      .sort((a, b) => a.n - b.n || a.h.message.seq - b.h.message.seq)
      .map((x) => x.h);
    const plan = this.budgeted([
      ...fresh.map((hot) => ({ hot, kind: 'live' as const })),
      ...again.map((hot) => ({ hot, kind: 'replayed' as const })),
    ]);
    const first = plan.filter((p) => p.kind === 'live');
    if (first.length > 0) {
      // First pushes: their intent lands before them, as for a new message. A store that cannot
      // be written does not hold the mail back; the push records are best effort too.
      const at = this.deps.now();
      await this.deps
        .commit(first.map((p) => ({ type: 'offered', id: p.hot.message.id, recipient: session.identity, at })))
        .catch((e) =>
          this.deps.log(
            `could not record the replay to ${sessionLabel(session.key)} before pushing it: ${(e as Error).message}`,
            'error',
          ),
        );
      if (!session.isOpen()) return;
    }
    for (const p of plan) this.pushTo(session, p.hot, p.kind, p.text);
    if (waiting.length > plan.length) {
      session.deliver({
        id: '',
        from: 'handoff',
        thread: '',
        kind: 'replayed',
        text: truncatedNotice(waiting.length - plan.length),
      });
    }
  }

  /** The replay's first pushes, in order, rendered, while they fit REPLAY_BYTES with the notice (the first always goes). */
  private budgeted(
    order: { hot: HotMessage; kind: 'live' | 'replayed' }[],
  ): { hot: HotMessage; kind: 'live' | 'replayed'; text: string }[] {
    const room = REPLAY_BYTES - Buffer.byteLength(truncatedNotice(order.length));
    const plan: { hot: HotMessage; kind: 'live' | 'replayed'; text: string }[] = [];
    let bytes = 0;
    for (const p of order.slice(0, this.deps.replayLimit)) {
      const text = renderMessage(withBody(p.hot.message), p.kind);
      bytes += Buffer.byteLength(text);
      if (plan.length > 0 && bytes > room) break;
      plan.push({ ...p, text });
    }
    return plan;
  }

  /** The session's connection was closed with bytes queued and not read (serve/mcp/socketTransport.ts). */
  unread(key: string, queuedBytes: number, pastBound: boolean): void {
    const kib = Math.round(queuedBytes / 1024);
    this.deps.log(
      `${sessionLabel(key)} ${pastBound ? `stopped reading: ${kib} KiB written and not taken, past its bound; closed` : `closed with ${kib} KiB written and not taken`}; what it was pushed is replayed when it comes back`,
      'warn',
    );
    this.cut.delete(key);
    this.cut.add(key);
    // Keys that never come back: the oldest are forgotten (a key is 128 characters at most).
    if (this.cut.size > MAX_CUT_KEYS) this.cut.delete(this.cut.values().next().value!);
  }

  /** Forgets settled messages; amortised O(1) per push. */
  prune(): void {
    if (this.pushedToIdentity.size < this.pruneAt) return;
    for (const k of this.pushedToIdentity)
      if (!this.deps.isOpen(k.slice(k.indexOf('\n') + 1))) this.pushedToIdentity.delete(k);
    this.pruneAt = Math.max(4096, 2 * this.pushedToIdentity.size);
  }
}

function truncatedNotice(more: number): string {
  return `Replay truncated: ${more} more unacked handoffs were not pushed. Call inbox: it lists them oldest first, a page at a time; page on with its next_after_seq as after_seq.`;
}

// When each open handoff next needs the timer (its SLA chase, its escalation a period after a
// chase, its TTL dead-letter), as a min-heap of due times, so the once-a-second tick looks at what
// is due, not at every open message.
import { isEscalationDue, type EscalationContext } from './escalate';
import { dueEventsOf } from './ledger';
import type { BusEvent, BusState, HotMessage, StoredMessage } from './model';

type Deadlines = Pick<StoredMessage, 'id' | 'requiresAck' | 'sentAt' | 'slaMs' | 'ttlMs'>;

export class DueIndex {
  /**
   * The heap as two parallel arrays (due time, message id): an entry per open handoff, so an
   * object per entry (and a boxed time in it) cost three times the array slots.
   */
  private readonly ats: number[] = [];
  private readonly ids: string[] = [];
  /** Escalations due with nobody to escalate to. */
  private readonly waiting = new Set<string>();

  static of(state: BusState): DueIndex {
    const index = new DueIndex();
    for (const hot of Object.values(state.hot)) index.add(hot);
    return index;
  }

  /** An open message as it stands: its next deadline, and a chased delivery's next period. */
  add(hot: HotMessage): void {
    this.schedule(hot.message);
    for (const d of Object.values(hot.deliveries))
      if (d.chasedAt !== undefined) this.push(d.chasedAt + hot.message.slaMs, hot.message.id);
  }

  /**
   * Follows the journal: a new handoff that needs an ACK is due at its SLA and at its TTL; a chased
   * one a period later. Of the two deadlines only the first is on the heap; taking it puts the
   * second there (one entry per open handoff, not two).
   */
  note(state: BusState, events: BusEvent[]): void {
    for (const e of events) {
      if (e.type === 'sent') this.schedule(e.message);
      const m = e.type === 'chased' ? state.hot[e.id]?.message : undefined;
      if (m && e.type === 'chased') this.push(e.at + m.slaMs, m.id);
    }
  }

  private schedule(m: Deadlines): void {
    if (!m.requiresAck) return;
    this.push(Math.min(m.sentAt + m.slaMs, m.sentAt + m.ttlMs), m.id);
  }

  /** Taken at its first deadline: the second goes on the heap. */
  private scheduleSecond(m: Deadlines, at: number): void {
    const first = Math.min(m.sentAt + m.slaMs, m.sentAt + m.ttlMs);
    const second = Math.max(m.sentAt + m.slaMs, m.sentAt + m.ttlMs);
    if (m.requiresAck && at === first && second > first) this.push(second, m.id);
  }

  /**
   * The timer events due at `now` (the same as ledger's dueEvents over the whole state). A
   * message that yields events is looked at again on the next tick, so events that could not be
   * recorded are produced again, and recorded ones are not (the state then says chased or failed).
   * `passed`: the open messages a deadline passed for — their rows changed with the clock alone.
   */
  take(state: BusState, now: number, escalation?: EscalationContext): { events: BusEvent[]; passed: string[] } {
    const ids = new Map<string, number[]>(); // each due handoff → the deadlines taken for it
    while (this.ats.length > 0 && this.ats[0] < now) {
      const at = this.ats[0];
      const id = this.pop();
      const ats = ids.get(id);
      if (ats) ats.push(at);
      else ids.set(id, [at]);
    }
    const events: BusEvent[] = [];
    const passed: string[] = [];
    for (const [id, ats] of ids) {
      const hot = state.hot[id];
      if (!hot) continue; // settled and archived
      for (const at of ats) this.scheduleSecond(hot.message, at);
      passed.push(id);
      const due = dueEventsOf(hot, now, escalation);
      // An escalation with nobody to tell waits, off the heap, until a person is there (wake()).
      if (due.length === 0 && escalation && Object.values(hot.deliveries).some((d) => isEscalationDue(hot, d, now)))
        this.waiting.add(id);
      if (due.length === 0) continue;
      events.push(...due);
      this.push(now, id);
    }
    return { events, passed };
  }

  /** Someone to escalate to may be there now: the waiting escalations are due again. */
  wake(): void {
    for (const id of this.waiting) this.push(0, id);
    this.waiting.clear();
  }

  private push(at: number, id: string): void {
    const { ats, ids } = this;
    let i = ats.length;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ats[parent] <= at) break;
      ats[i] = ats[parent];
      ids[i] = ids[parent];
      i = parent;
    }
    ats[i] = at;
    ids[i] = id;
  }

  /** Takes the earliest entry off the heap; its message id. */
  private pop(): string {
    const { ats, ids } = this;
    const top = ids[0];
    const lastAt = ats.pop()!;
    const lastId = ids.pop()!;
    const n = ats.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const c = l + 1 < n && ats[l + 1] < ats[l] ? l + 1 : l;
        if (ats[c] >= lastAt) break;
        ats[i] = ats[c];
        ids[i] = ids[c];
        i = c;
      }
      ats[i] = lastAt;
      ids[i] = lastId;
    }
    return top;
  }
}

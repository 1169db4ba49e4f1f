// When each open handoff next needs the timer (its SLA chase, its escalation a period after a
// chase, its TTL dead-letter), as a min-heap of due times, so the once-a-second tick looks at what
// is due, not at every open message.
import { isEscalationDue, type EscalationContext } from './escalate';
import { dueEventsOf } from './ledger';
import type { BusEvent, BusState, Message } from './model';

interface Due {
  at: number;
  id: string;
}

export class DueIndex {
  private readonly heap: Due[] = [];
  /** Escalations due with nobody to escalate to. */
  private readonly waiting = new Set<string>();

  static of(state: BusState): DueIndex {
    const index = new DueIndex();
    for (const hot of Object.values(state.hot)) {
      index.schedule(hot.message);
      for (const d of Object.values(hot.deliveries)) if (d.chasedAt !== undefined) index.push({ at: d.chasedAt + hot.message.slaMs, id: hot.message.id });
    }
    return index;
  }

  /** Follows the journal: a new handoff that needs an ACK is due at its SLA and at its TTL; a chased one a period later. */
  note(state: BusState, events: BusEvent[]): void {
    for (const e of events) {
      if (e.type === 'sent') this.schedule(e.message);
      const m = e.type === 'chased' ? state.hot[e.id]?.message : undefined;
      if (m && e.type === 'chased') this.push({ at: e.at + m.slaMs, id: m.id });
    }
  }

  private schedule(m: Message): void {
    if (!m.requiresAck) return;
    this.push({ at: m.sentAt + m.slaMs, id: m.id });
    this.push({ at: m.sentAt + m.ttlMs, id: m.id });
  }

  /**
   * The timer events due at `now` (the same as ledger's dueEvents over the whole state). A
   * message that yields events is looked at again on the next tick, so events that could not be
   * recorded are produced again, and recorded ones are not (the state then says chased or failed).
   * `passed`: the open messages a deadline passed for — their rows changed with the clock alone.
   */
  take(state: BusState, now: number, escalation?: EscalationContext): { events: BusEvent[]; passed: string[] } {
    const ids = new Set<string>();
    while (this.heap.length > 0 && this.heap[0].at < now) ids.add(this.pop().id);
    const events: BusEvent[] = [];
    const passed: string[] = [];
    for (const id of ids) {
      const hot = state.hot[id];
      if (!hot) continue; // settled and archived
      passed.push(id);
      const due = dueEventsOf(hot, now, escalation);
      // An escalation with nobody to tell waits, off the heap, until a person is there (wake()).
      if (due.length === 0 && escalation && Object.values(hot.deliveries).some((d) => isEscalationDue(hot, d, now))) this.waiting.add(id);
      if (due.length === 0) continue;
      events.push(...due);
      this.push({ at: now, id });
    }
    return { events, passed };
  }

  /** Someone to escalate to may be there now: the waiting escalations are due again. */
  wake(): void {
    for (const id of this.waiting) this.push({ at: 0, id });
    this.waiting.clear();
  }

  private push(d: Due): void {
    const h = this.heap;
    let i = h.push(d) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent].at <= d.at) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = d;
  }

  private pop(): Due {
    const h = this.heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const c = l + 1 < h.length && h[l + 1].at < h[l].at ? l + 1 : l;
        if (h[c].at >= last.at) break;
        h[i] = h[c];
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}

// The hub's timer: what fell due (bus/dueIndex.ts decides: chase once past the SLA, escalate once
// a period later, dead-letter past the TTL) is committed, then pushed. Runs never overlap: a chase
// still being written is not due again.
import type { People } from '../presence/people';
import type { Journal } from '../state/journal';
import type { Pushes } from './pushes';
import type { Log } from '../../protocol/hubLog';

export interface TimerDeps {
  journal: Journal;
  pushes: Pushes;
  people: People;
  node: string;
  now: () => number;
  log: Log;
}

export class DueTimer {
  private running = false;

  constructor(private readonly deps: TimerDeps) {}

  async run(): Promise<void> {
    const { journal, pushes } = this.deps;
    if (!journal.isOpen || this.running) return;
    const now = this.deps.now();
    const { events, passed } = journal.due.take(journal.state, now, {
      person: () => this.deps.people.escalationTarget(),
      newId: () => journal.newId(now),
      nextSeq: () => journal.nextSeq(),
      node: this.deps.node,
    });
    if (events.length > 0) {
      this.running = true;
      try {
        await pushes.admit(events); // escalations are new messages; chases and failures ride along
      } catch (e) {
        this.deps.log(`timer events not recorded: ${(e as Error).message}`, 'error');
        return;
      } finally {
        this.running = false;
      }
      pushes.chased(events);
      for (const e of events) {
        if (e.type === 'failed') this.deps.log(`dead-lettered ${e.id} for ${e.recipient}: ${e.reason}`, 'warn');
        if (e.type === 'escalated')
          this.deps.log(`escalated ${e.id} (${e.recipient} silent past its chase) to ${e.to} as ${e.messageId}`);
      }
    }
    // Rows whose overdue flag changed with no event.
    if (passed.length) journal.changed(passed);
  }
}

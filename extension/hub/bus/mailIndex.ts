// Which open messages each identity has: derived from the state, kept in memory, so a question
// about one identity's mail (the footer on every tool result, every hook) costs that identity's
// open mail, not everyone's. Settled messages leave `hot` at checkpoints; their ids are pruned here
// the next time their recipient's mail is read.
import type { BusEvent, BusState, HotMessage } from './model';

export class MailIndex {
  private readonly byRecipient = new Map<string, Set<string>>();

  static of(state: BusState): MailIndex {
    const index = new MailIndex();
    for (const hot of Object.values(state.hot).sort((a, b) => a.message.seq - b.message.seq)) index.add(hot.message.id, hot.message.recipients);
    return index;
  }

  private add(id: string, recipients: string[]): void {
    for (const r of recipients) {
      let ids = this.byRecipient.get(r);
      if (!ids) this.byRecipient.set(r, (ids = new Set()));
      ids.add(id);
    }
  }

  /** Follows the journal: new messages join their recipients' mail. */
  note(events: BusEvent[]): void {
    for (const e of events) if (e.type === 'sent') this.add(e.message.id, e.message.recipients);
  }

  /** The identity's messages still in `hot`, oldest first. */
  openFor(state: BusState, identity: string): HotMessage[] {
    const ids = this.byRecipient.get(identity);
    if (!ids) return [];
    const out: HotMessage[] = [];
    for (const id of ids) {
      const hot = state.hot[id];
      if (hot) out.push(hot);
      else ids.delete(id); // settled and archived
    }
    return out.sort((a, b) => a.message.seq - b.message.seq);
  }
}

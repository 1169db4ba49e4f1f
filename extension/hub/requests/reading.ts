// A message as the tools show it: open or archived, and only to its sender and recipients.
import { checkMessageId } from '../bus/decide';
import { BusError } from '../bus/errors';
import type { Journal } from '../state/journal';
import type { MessageView } from '../../protocol/views';
import { withBody } from '../bus/body';
import { mayRead } from '../bus/mayRead';

export async function lookup(journal: Journal, id: string): Promise<MessageView | undefined> {
  checkMessageId(id);
  const hot = await journal.find(id);
  if (!hot) return undefined;
  return {
    message: withBody(hot.message),
    deliveries: Object.values(hot.deliveries),
    settled: !journal.state.hot[id],
    resolution: hot.resolution,
    relayed: hot.relayed,
  };
}

export async function messageFor(journal: Journal, identity: string, id: string): Promise<MessageView> {
  const view = await lookup(journal, id);
  if (!view) {
    const dropped = journal.retention?.mayHaveDropped(id) ? journal.retention.dropped : undefined;
    if (dropped)
      throw new BusError(
        'removed_by_retention',
        `No message ${id} on this hub any more: this store's retention (\`handoff store retention\`) has removed ${dropped.handoffs} settled handoff(s) of history${dropped.settledBefore > 0 ? `, settled up to ${new Date(dropped.settledBefore).toISOString()}, and ${id} was made before then` : ''}. Nothing open is ever removed.`,
      );
    throw new BusError('unknown_message', `No message ${id} on this hub. Check the id with inbox or pending.`);
  }
  if (!mayRead(view.message, identity)) {
    throw new BusError(
      'not_addressed_to_you',
      `Message ${id} is between ${view.message.from} and ${view.message.recipients.join(', ')}; ${identity} is neither its sender nor a recipient.`,
    );
  }
  return view;
}

// What happened to a send, per recipient, in one sentence: the MCP tool, the editor and the CLI
// each add their own opening and where to look for the ACK.
import { SEEN_TEXT, type RecipientOutcome, type SendResult } from '../protocol/views';
import { plural } from './format';

export function relayText(relay: SendResult['relay']): string {
  if (!relay) return 'not relayed';
  if (relay.state === 'on_homeserver')
    return `on the Matrix homeserver as ${relay.event_id}; its hub pushes it (their ACK is the proof)`;
  if (relay.state === 'in_their_hub')
    return `in the hub of the linked repository ${relay.repository}; its hub pushes it (their ACK is the proof)`;
  if (relay.state === 'refused') return `NOT delivered: ${relay.reason}`;
  if (relay.repository)
    return `queued: stored in this hub's outbox, NOT in ${relay.repository}'s hub yet (${relay.note})`;
  return `in the Matrix outbox, NOT on the homeserver yet${relay.last_error ? ` (${relay.last_error})` : ''}; retried with the same txnId`;
}

function recipientText(x: RecipientOutcome, r: SendResult): string {
  if (x.seen_when === 'on_another_node') return `for ${x.identity} on another node: ${relayText(r.relay)}`;
  const where =
    x.sessions > 0
      ? `pushed to ${x.identity} (${plural(x.sessions, 'session')})`
      : `queued for ${x.identity} (${x.state === 'queued' ? 'no live session; it is pushed when one connects' : x.state})`;
  return `${where}, ${SEEN_TEXT[x.seen_when]}${x.why ? `: ${x.why}` : ''}`;
}

/** "pushed to bob (1 session), its model sees it after its current tool call; queued for eve (…)…" */
export function recipientsText(r: SendResult): string {
  return r.recipients.map((x) => recipientText(x, r)).join('; ');
}

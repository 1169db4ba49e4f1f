// What "Send Handoff…" shows: the recipient list with live/ghost marks, and the one sentence
// that says what happened to a send. Plain functions, so they are tested without an editor.
import type { QuickPickItem } from 'vscode';
import type { SendResult, Snapshot } from '../../protocol/views';
import { plural } from '../../shared/format';
import { recipientsText } from '../../shared/sendText';

export interface RecipientPick extends QuickPickItem {
  identity: string;
}

export function recipientPicks(s: Snapshot | undefined, me: string): RecipientPick[] {
  // Live first, then the rest by name.
  const others = (s?.coverage ?? [])
    .filter((c) => c.identity !== me)
    .sort((a, b) => Number(b.liveSessions > 0) - Number(a.liveSessions > 0) || a.identity.localeCompare(b.identity));
  const picks: RecipientPick[] = others.map(
    (c) =>
      linkedPick(s, c.identity) ?? {
        identity: c.identity,
        label: `${c.ghost ? '$(warning)' : c.person ? '$(person)' : c.liveSessions ? '$(circle-filled)' : '$(circle-outline)'} ${c.identity}`,
        description: c.ghost
          ? `ghost · ${c.unacked} unacked, nobody connected`
          : c.liveSessions
            ? `live · ${plural(c.liveSessions, 'session')}`
            : c.person
              ? `person at the editor · ${c.person.live ? 'live' : 'away'}`
              : 'offline · will be queued',
      },
  );
  if (picks.length > 1)
    picks.push({ identity: '*', label: '$(broadcast) *', description: 'everyone else on this hub' });
  return picks;
}

/** An agent of a repository linked to this one (`name@repo`): live as its hub last said. */
function linkedPick(s: Snapshot | undefined, identity: string): RecipientPick | undefined {
  const at = identity.indexOf('@');
  const link = at < 0 ? undefined : s?.links?.links.find((l) => l.name === identity.slice(at + 1));
  if (!link) return undefined;
  const live = link.peers.find((p) => p.name === identity.slice(0, at))?.live_sessions ?? 0;
  return {
    identity,
    label: `${live ? '$(circle-filled)' : '$(circle-outline)'} ${identity}`,
    description:
      link.state === 'linked'
        ? `linked repository ${link.name} · ${live ? `live · ${plural(live, 'session')}` : 'offline · will be queued there'}`
        : `linked repository ${link.name} · ${link.state} · will wait in the outbox`,
  };
}

/**
 * A typed name the list does not hold: offered, but marked — the hub refuses a name no agent has
 * connected as (a role or `*` it resolves itself).
 */
export function typedPick(name: string, picks: readonly RecipientPick[]): RecipientPick | undefined {
  if (!name || picks.some((p) => p.identity === name)) return undefined;
  if (name === '*' || name.startsWith('role:'))
    return { identity: name, label: `$(organization) ${name}`, description: 'send to this address' };
  return {
    identity: name,
    label: `$(warning) ${name}`,
    description: `no agent named "${name}" has connected to this hub: it would be refused`,
  };
}

/** One sentence that says exactly what happened to the message. */
export function describeResult(r: SendResult): string {
  if (r.duplicate) return `Not sent again: ${r.duplicate.note} (${r.message_id})`;
  return `Handoff ${r.message_id} stored and ${recipientsText(r)}. Not proof of reading: the ACK shows in the Handoff panel.`;
}

/**
 * A refused send in the person's words: without the JSON-RPC wrapper, and pointing at what the
 * person has (the recipient picker), not at an agent's tool.
 */
export function refusalText(to: string, message: string): string {
  const why = message
    .replace(/^Request \S+ failed with message: /, '')
    .replace(/list_peers shows them\./, 'the Send Handoff picker lists them.');
  return `Handoff NOT sent to ${to}: ${why}`;
}

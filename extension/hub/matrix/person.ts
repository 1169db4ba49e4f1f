// People in the bus room are identities too. A Matrix user `@carol:example.org` is the remote
// identity `carol@matrix:example.org`: its qualifier names no hub (hubs may not claim a `matrix:`
// node), and it is derived from the event's sender, which the homeserver vouches for — never from
// content. What a person types in the room is read with the small grammar below.
import { IDENTITY_PATTERN } from '../bus/identity';
import type { Outcome } from '../bus/model';

export const PERSON_NODE_PREFIX = 'matrix:';

export function isPersonNode(node: string): boolean {
  return node.startsWith(PERSON_NODE_PREFIX);
}

/** The identity of a Matrix user, or undefined when its id cannot be one (the name must stay exact). */
export function personIdentity(userId: string): string | undefined {
  const m = /^@([^:]+):(.+)$/.exec(userId);
  if (!m) return undefined;
  const identity = `${m[1]}@${PERSON_NODE_PREFIX}${m[2]}`;
  return IDENTITY_PATTERN.test(identity) ? identity : undefined;
}

/** The Matrix user behind a person's identity; undefined for agents' identities. */
export function personUser(identity: string): string | undefined {
  const at = identity.indexOf('@');
  const node = identity.slice(at + 1);
  if (at < 1 || !isPersonNode(node)) return undefined;
  return `@${identity.slice(0, at)}:${node.slice(PERSON_NODE_PREFIX.length)}`;
}

/** Reactions a person can put on a handoff addressed to them (Element's quick reactions). */
export const REACTIONS: Record<string, 'ack' | 'read'> = { '✅': 'ack', '👍': 'ack', '👀': 'read' };

export function reactionMeaning(key: string): 'ack' | 'read' | undefined {
  return REACTIONS[key.replace(/\uFE0F/g, '').trim()];
}

export type PersonCommand = { kind: 'ack' } | { kind: 'result'; outcome: Outcome; summary: string };

/**
 * A reply by a recipient to its handoff: `ack` (or ✅) ACKs; `done`, `stuck` or `rejected`,
 * optionally followed by `:` and a summary, reports the result. Anything else is an answer: a
 * handoff from the person to the sender.
 */
export function personCommand(text: string): PersonCommand | undefined {
  const t = text.trim();
  if (/^(ack|✅\uFE0F?)$/i.test(t)) return { kind: 'ack' };
  const m = /^(done|stuck|rejected|reject)(?:\s*[:\-—]\s*|\s+|$)([\s\S]*)$/i.exec(t);
  if (!m) return undefined;
  const word = m[1].toLowerCase();
  const outcome: Outcome = word === 'done' ? 'done' : word === 'stuck' ? 'stuck' : 'rejected';
  return { kind: 'result', outcome, summary: m[2].trim() || outcome };
}

/** A reply's own text: clients may quote the message replied to first (`> …` lines, then a blank line). */
export function replyText(body: string): string {
  const lines = body.split('\n');
  let i = 0;
  while (i < lines.length && lines[i].startsWith('>')) i++;
  if (i > 0 && lines[i]?.trim() === '') i++;
  return lines.slice(i).join('\n').trim();
}

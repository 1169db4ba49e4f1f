// The bus room's end-to-end encryption in words, for `handoff status` and the panel's Matrix
// header. Plain functions over the hub's LinkStatus.
import type { LinkStatus } from '../protocol/views';
import { plural } from './format';

/** One line: whether the room is encrypted, this hub's device, and how its devices stand. */
export function encryptionLine(r: LinkStatus): string {
  const e = r.encryption;
  if (!e) return 'not end-to-end encrypted: the homeserver can read every handoff';
  if (e.state === 'failed') return `end-to-end encrypted, but this hub has no device: ${e.error ?? 'unknown error'}`;
  const count = (t: string) => e.devices.filter((d) => d.trust === t).length;
  // Most telling first: a narrow panel cuts the end off (the whole line is its tooltip).
  return [
    'end-to-end encrypted',
    `${count('verified')} verified by node keys`,
    count('unverified') ? `${count('unverified')} unverified (people's: they get the keys)` : undefined,
    count('refused') ? `${count('refused')} refused (no node signed for them)` : undefined,
    e.waitingForKeys ? `${plural(e.waitingForKeys, 'event')} waiting for keys` : undefined,
    e.undecryptable ? `${e.undecryptable} undecryptable` : undefined,
    `this hub's device ${e.device ?? '?'}`,
  ]
    .filter(Boolean)
    .join(' · ');
}

/** Each device other than this hub's, one per line: "@carol:example.org ABCDEF unverified". */
export function deviceLines(r: LinkStatus): string[] {
  return (r.encryption?.devices ?? [])
    .filter((d) => d.trust !== 'this hub')
    .map((d) => `${d.user} ${d.device} ${d.trust}`);
}

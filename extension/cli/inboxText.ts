// What `handoff inbox` says when it lists nothing: an empty inbox, or a name no agent has used.

export function emptyInboxText(me: string, known: readonly string[]): string {
  if (known.includes(me)) return `inbox of ${me} is empty`;
  return `no agent named "${me}" has connected to this hub, so nothing can be addressed to it. Known names: ${known.length ? known.join(', ') : 'none yet'}.`;
}

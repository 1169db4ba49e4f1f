// The hooks block the three CLIs share in shape: `{ Event: [{ matcher?, hooks: [{ type: "command",
// command, … }] }] }`. Ours are recognised by their command's mark; the user's stay untouched.
import { isOurHook } from './launch';
import type { Json } from './files';

export interface HookEntry {
  event: string;
  matcher?: string;
  hook: Json & { command: string };
}

type Group = { matcher?: string; hooks?: Json[] };

/** Removes our hook commands; groups and events left empty by that go too. Returns how many went. */
export function removeOurHooks(hooks: Json): number {
  let removed = 0;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    const kept = (groups as Group[]).flatMap((g) => {
      if (!g || !Array.isArray(g.hooks)) return [g];
      const mine = g.hooks.filter((h) => isOurHook(h?.command));
      removed += mine.length;
      if (mine.length === 0) return [g];
      const rest = g.hooks.filter((h) => !isOurHook(h?.command));
      return rest.length ? [{ ...g, hooks: rest }] : [];
    });
    if (kept.length) hooks[event] = kept;
    else delete hooks[event];
  }
  return removed;
}

/** Removes our hooks from a settings document's `hooks` block, and the block if that empties it. */
export function removeOurHooksFrom(doc: Json): number {
  const hooks = doc.hooks;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return 0;
  const n = removeOurHooks(hooks as Json);
  if (Object.keys(hooks).length === 0) delete doc.hooks;
  return n;
}

/** Replaces our hooks with `entries` (idempotent: connecting twice leaves one set). */
export function setOurHooks(hooks: Json, entries: HookEntry[]): void {
  removeOurHooks(hooks);
  for (const e of entries) {
    const groups = Array.isArray(hooks[e.event]) ? (hooks[e.event] as Group[]) : [];
    groups.push({ ...(e.matcher !== undefined ? { matcher: e.matcher } : {}), hooks: [e.hook] });
    hooks[e.event] = groups;
  }
}

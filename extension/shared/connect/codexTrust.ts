// Codex runs a hook from hooks.json only when config.toml trusts it: one table per handler, keyed
// by file, event, group and handler index, holding a hash of the handler as Codex sees it (an
// untrusted hook is skipped silently). Recipe checked against Codex 0.171's own `hooks/list`.
import { createHash } from 'node:crypto';
import type { Json } from './files';
import { isOurHook } from './launch';
import { tomlString } from './codexToml';

export interface TrustTable {
  table: string;
  text: string;
}

/** `PostToolUse` → `post_tool_use`. */
const label = (event: string) => event.replace(/(?<=[a-z])([A-Z])/g, '_$1').toLowerCase();

/** Codex ignores the matcher of these events, and so does the hash. */
const NO_MATCHER = new Set(['UserPromptSubmit', 'Stop']);

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Json)[k])]),
    );
  return v;
}

export function codexHookHash(event: string, matcher: string | undefined, handler: Json): string {
  const timeout = typeof handler.timeout === 'number' ? handler.timeout : 600;
  const hook: Json = {
    type: 'command',
    command: handler.command,
    timeout: Math.max(1, timeout),
    async: handler.async === true,
  };
  if (typeof handler.statusMessage === 'string') hook.statusMessage = handler.statusMessage;
  const identity: Json = { event_name: label(event), hooks: [hook] };
  if (matcher !== undefined && !NO_MATCHER.has(event)) identity.matcher = matcher;
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(canonical(identity)))
    .digest('hex')}`;
}

/** The trust table of each of our handlers in hooks.json, at its current position. */
export function codexHookTrust(hooksPath: string, hooksDoc: Json): TrustTable[] {
  const out: TrustTable[] = [];
  const hooks = (hooksDoc.hooks ?? {}) as Record<string, { matcher?: string; hooks?: Json[] }[]>;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((g, gi) =>
      (g?.hooks ?? []).forEach((h, hi) => {
        if (!isOurHook(h?.command)) return;
        const table = `hooks.state.${tomlString(`${hooksPath}:${label(event)}:${gi}:${hi}`)}`;
        out.push({ table, text: `[${table}]\ntrusted_hash = ${tomlString(codexHookHash(event, g.matcher, h))}\n` });
      }),
    );
  }
  return out;
}

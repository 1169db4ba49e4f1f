// Codex CLI: the MCP server in $CODEX_HOME/config.toml, the hooks in $CODEX_HOME/hooks.json (Claude
// Code's format), and each hook marked trusted in config.toml — Codex skips untrusted hooks silently.
// Both files are the user's, not the folder's: in git nothing in them names the agent — the
// checkout a session runs in does (agentNames.ts) — so two worktrees' agents are two identities.
import { homedir } from 'node:os';
import { codexServerTable, upsertTable } from './codexToml';
import { codexHookTrust } from './codexTrust';
import { jsonChange, objectAt, readJson, readText, type FileChange } from './files';
import { removeOurHooksFrom, setOurHooks, type HookEntry } from './hooks';
import { bridgeCommand, hookCommand, type AgentRef } from './launch';
import { pathFor } from './platformPaths';
import type { ConnectOptions } from './types';

const SERVER = 'handoff';
const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop'];

/** Codex's files: $CODEX_HOME, else ~/.codex (%USERPROFILE%\.codex on Windows). Codex keys each hook's trust by this path. */
export function codexFiles(o: { codexHome?: string; home?: string; platform?: NodeJS.Platform }) {
  const { join } = pathFor(o.platform);
  const dir = o.codexHome ?? process.env.CODEX_HOME ?? join(o.home ?? homedir(), '.codex');
  return { config: join(dir, 'config.toml'), hooks: join(dir, 'hooks.json') };
}

export function connectCodex(o: ConnectOptions): FileChange[] {
  const f = codexFiles(o);
  const hooksDoc = readJson(f.hooks);
  const stale = codexHookTrust(f.hooks, hooksDoc); // our previous hooks' trust, at their old positions
  const hooks = objectAt(hooksDoc, 'hooks');
  // Per user: in git, unpinned (each session's folder finds its repository's hub and its name).
  const ref: AgentRef = o.repository ? { cli: 'codex' } : { cli: 'codex', name: o.name, workspace: o.workspace };
  const entries: HookEntry[] = EVENTS.map((event) => ({
    event,
    matcher: event === 'PostToolUse' ? '*' : undefined,
    hook: { type: 'command', command: hookCommand(o.launch, ref, event, o.platform), timeout: 5 },
  }));
  setOurHooks(hooks, entries);
  let toml = upsertTable(
    readText(f.config) ?? '',
    `mcp_servers.${SERVER}`,
    codexServerTable(SERVER, bridgeCommand(o.launch, ref, o.platform)),
  );
  for (const t of stale) toml = upsertTable(toml, t.table, undefined);
  for (const t of codexHookTrust(f.hooks, hooksDoc)) toml = upsertTable(toml, t.table, t.text);
  return [
    jsonChange(f.hooks, `${entries.length} hooks (${EVENTS.join(', ')})`, hooksDoc),
    {
      path: f.config,
      what: `MCP server "${SERVER}"${ref.name ? ` (bridge as ${ref.name})` : ''} and the hooks' trust`,
      before: readText(f.config),
      after: toml,
    },
  ];
}

export function disconnectCodex(o: { codexHome?: string; home?: string; platform?: NodeJS.Platform }): FileChange[] {
  const f = codexFiles(o);
  const changes: FileChange[] = [];
  const hooksDoc = readJson(f.hooks);
  const before = codexHookTrust(f.hooks, hooksDoc);
  const n = removeOurHooksFrom(hooksDoc);
  if (n) changes.push(jsonChange(f.hooks, `removed ${n} Handoff hooks`, hooksDoc));
  const text = readText(f.config);
  if (text !== undefined) {
    let toml = upsertTable(text, `mcp_servers.${SERVER}`, undefined);
    for (const t of before) toml = upsertTable(toml, t.table, undefined);
    if (toml !== text)
      changes.push({
        path: f.config,
        what: `removed MCP server "${SERVER}" and the hooks' trust`,
        before: text,
        after: toml,
      });
  }
  return changes;
}

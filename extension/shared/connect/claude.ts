// Claude Code: the MCP server in the user's ~/.claude.json under this folder (what `claude mcp add
// --scope local` writes), the hooks in the folder's .claude/settings.local.json (not committed).
// In git the folder is the main checkout: Claude Code 2.1.211 and later read both from there for every worktree
// of the repository, inside it or anywhere else (verified with the real CLI, test/agents/worktrees).
import { homedir } from 'node:os';
import { thisPlatform } from '../platform/launcher';
import { jsonChange, objectAt, readJson, type FileChange, type Json } from './files';
import { removeOurHooksFrom, setOurHooks, type HookEntry } from './hooks';
import { bridgeCommand, hookCommand, type AgentRef, type Launch } from './launch';
import { claudeProjectKey, pathFor } from './platformPaths';
import type { ConnectOptions } from './types';

const SERVER = 'handoff';
/** Claude Code's permission rule for every tool of one MCP server. */
const ALLOW = `mcp__${SERVER}`;

type Where = { workspace: string; home?: string; platform?: NodeJS.Platform };

/** Claude Code's files: $CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json (%USERPROFILE%\.claude.json on Windows). */
export function claudeFiles(o: Where) {
  const { join } = pathFor(o.platform);
  const dir = process.env.CLAUDE_CONFIG_DIR || (o.home ?? homedir());
  return {
    user: join(dir, '.claude.json'),
    settings: join(o.workspace, '.claude', 'settings.local.json'),
    project: claudeProjectKey(o.platform ?? thisPlatform, o.workspace),
  };
}

function hookEntries(launch: Launch, ref: AgentRef, platform?: NodeJS.Platform): HookEntry[] {
  const cmd = (event: string) => hookCommand(launch, ref, event, platform);
  const sync = (event: string, matcher?: string): HookEntry => ({
    event,
    matcher,
    hook: { type: 'command', command: cmd(event), timeout: 5 },
  });
  // The idle waiter re-arms at every session start and turn end; exit 2 wakes the idle session.
  const waiter = (event: string): HookEntry => ({
    event,
    hook: { type: 'command', command: cmd('wait'), asyncRewake: true, timeout: 3600 },
  });
  return [
    sync('SessionStart'),
    sync('UserPromptSubmit'),
    sync('PostToolUse', '*'),
    sync('Stop'),
    waiter('SessionStart'),
    waiter('Stop'),
  ];
}

export function connectClaude(o: ConnectOptions): FileChange[] {
  const f = claudeFiles(o);
  const user = readJson(f.user);
  const project = objectAt(objectAt(user, 'projects'), f.project);
  const ref: AgentRef = { cli: 'claude', name: o.name, workspace: o.workspace };
  const { command, args, env } = bridgeCommand(o.launch, ref, o.platform);
  // alwaysLoad: Claude Code (2.1.337 measured) otherwise starts a session before its MCP servers are
  // connected and defers their tools behind tool search, so a first turn, a hook's "ack it" and a
  // wake met no Handoff tool; with it the session waits for the server (the bridge answers at once)
  // and every Handoff tool is in the model's first request. Older versions ignore it (2.1.197, 2.1.211).
  objectAt(project, 'mcpServers')[SERVER] = { type: 'stdio', command, args, env, alwaysLoad: true };
  const settings = readJson(f.settings);
  const hooks = objectAt(settings, 'hooks');
  const entries = hookEntries(o.launch, ref, o.platform);
  setOurHooks(hooks, entries);
  // Handoff's tools run unprompted, like any tool the user allowed (nothing in them reaches outside the bus).
  const permissions = objectAt(settings, 'permissions');
  const allow = Array.isArray(permissions.allow) ? (permissions.allow as unknown[]) : [];
  if (!allow.includes(ALLOW)) permissions.allow = [...allow, ALLOW];
  return [
    jsonChange(f.user, `MCP server "${SERVER}" for ${o.workspace}${o.name ? ` (bridge as ${o.name})` : ''}`, user),
    jsonChange(
      f.settings,
      `${entries.length} hooks (SessionStart, UserPromptSubmit, PostToolUse, Stop; an idle waiter at SessionStart and Stop) and the ${ALLOW} permission`,
      settings,
    ),
  ];
}

export function disconnectClaude(o: Where): FileChange[] {
  const f = claudeFiles(o);
  const user = readJson(f.user);
  const project = (user.projects as Json | undefined)?.[f.project] as Json | undefined;
  const servers = project?.mcpServers as Json | undefined;
  const changes: FileChange[] = [];
  if (servers && SERVER in servers) {
    delete servers[SERVER];
    changes.push(jsonChange(f.user, `removed MCP server "${SERVER}" for ${o.workspace}`, user));
  }
  const settings = readJson(f.settings);
  let removed = removeOurHooksFrom(settings);
  const permissions = settings.permissions as Json | undefined;
  if (permissions && Array.isArray(permissions.allow) && permissions.allow.includes(ALLOW)) {
    permissions.allow = permissions.allow.filter((r) => r !== ALLOW);
    if ((permissions.allow as unknown[]).length === 0) delete permissions.allow;
    if (Object.keys(permissions).length === 0) delete settings.permissions;
    removed++;
  }
  if (removed) changes.push(jsonChange(f.settings, `removed the Handoff hooks and the ${ALLOW} permission`, settings));
  return changes;
}

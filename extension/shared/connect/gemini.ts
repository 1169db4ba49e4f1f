// Gemini CLI: the MCP server (trusted, so the model is offered its tools) and the hooks, and the
// folder in ~/.gemini/trustedFolders.json. Gemini reads workspace settings only from the folder a
// session runs in — a worktree does not see its main checkout's (verified with 0.61) — so in git
// they go in the user's ~/.gemini/settings.json, unpinned: each session's checkout names the agent
// and finds its repository's hub. Outside git, in the folder's .gemini/settings.json, pinned.
import { homedir } from 'node:os';
import { jsonChange, objectAt, readJson, type FileChange, type Json } from './files';
import { removeOurHooksFrom, setOurHooks, type HookEntry } from './hooks';
import { bridgeCommand, hookCommand, type AgentRef } from './launch';
import { pathFor } from './platformPaths';
import type { ConnectOptions } from './types';

const SERVER = 'handoff';
/** The trust level Gemini CLI writes for "Trust folder" (it covers the folders below it too). */
const TRUST = 'TRUST_FOLDER';
const EVENTS = ['SessionStart', 'BeforeAgent', 'AfterTool', 'AfterAgent'];

type Where = { workspace: string; repository: boolean; home?: string; platform?: NodeJS.Platform };

/** ~/.gemini (%USERPROFILE%\.gemini on Windows). */
function geminiDir(o: { home?: string; platform?: NodeJS.Platform }): string {
  return pathFor(o.platform).join(o.home ?? homedir(), '.gemini');
}

/** Where connect writes Gemini's settings: the user's in git, else the folder's. */
export function geminiSettingsPath(o: Where): string {
  const { join } = pathFor(o.platform);
  return o.repository ? join(geminiDir(o), 'settings.json') : join(o.workspace, '.gemini', 'settings.json');
}

export function connectGemini(o: ConnectOptions & { trust?: string[] }): FileChange[] {
  const path = geminiSettingsPath(o);
  const settings = readJson(path);
  const ref: AgentRef = o.repository ? { cli: 'gemini' } : { cli: 'gemini', name: o.name, workspace: o.workspace };
  const { command, args, env } = bridgeCommand(o.launch, ref, o.platform);
  objectAt(settings, 'mcpServers')[SERVER] = { command, args, env, trust: true };
  const entries: HookEntry[] = EVENTS.map((event) => ({
    event,
    matcher: event === 'AfterTool' ? '*' : undefined,
    hook: {
      name: `handoff-${event}`,
      type: 'command',
      command: hookCommand(o.launch, ref, event, o.platform),
      timeout: 5000,
    },
  }));
  setOurHooks(objectAt(settings, 'hooks'), entries);
  const changes = [
    // A folder's own settings from before (a worktree's, or the main checkout's) would run the hooks twice.
    ...(o.repository ? disconnectFolder(o.workspace, o.platform) : []),
    jsonChange(
      path,
      `MCP server "${SERVER}" (trusted${ref.name ? `; bridge as ${ref.name}` : ''}) and ${entries.length} hooks (${EVENTS.join(', ')})${o.repository ? ' for every folder; they act only where a hub is' : ''}`,
      settings,
    ),
  ];
  const trustedPath = pathFor(o.platform).join(geminiDir(o), 'trustedFolders.json');
  const trusted = readJson(trustedPath);
  const folders = [o.workspace, ...(o.trust ?? [])].filter((f) => trusted[f] !== TRUST);
  for (const f of folders) trusted[f] = TRUST;
  if (folders.length) changes.push(jsonChange(trustedPath, `trusted ${folders.join(', ')}`, trusted));
  return changes;
}

function disconnectFolder(folder: string, platform?: NodeJS.Platform): FileChange[] {
  const path = pathFor(platform).join(folder, '.gemini', 'settings.json');
  const settings = readJson(path);
  const servers = settings.mcpServers as Json | undefined;
  let what = '';
  if (servers && SERVER in servers) {
    delete servers[SERVER];
    if (Object.keys(servers).length === 0) delete settings.mcpServers;
    what = `removed MCP server "${SERVER}"`;
  }
  const n = removeOurHooksFrom(settings);
  if (n) what = `${what ? `${what} and ` : 'removed '}${n} Handoff hooks`;
  return what ? [jsonChange(path, what, settings)] : [];
}

/** Leaves the folders' trust as it is: the user may have trusted them for other reasons. */
export function disconnectGemini(o: Where): FileChange[] {
  return o.repository
    ? [...disconnectFolder(o.workspace, o.platform), ...disconnectFolder(o.home ?? homedir(), o.platform)]
    : disconnectFolder(o.workspace, o.platform);
}

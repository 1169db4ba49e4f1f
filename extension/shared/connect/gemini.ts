// Gemini CLI: the MCP server (trusted, so the model is offered its tools) and the hooks in the
// folder's .gemini/settings.json, and the folder in ~/.gemini/trustedFolders.json.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { jsonChange, objectAt, readJson, type FileChange, type Json } from './files';
import { removeOurHooksFrom, setOurHooks, type HookEntry } from './hooks';
import { bridgeCommand, hookCommand } from './launch';
import type { ConnectOptions } from './types';

const SERVER = 'handoff';
/** The trust level Gemini CLI writes for "Trust folder". */
const TRUST = 'TRUST_FOLDER';

function files(o: { workspace: string; home?: string }) {
  return {
    settings: join(o.workspace, '.gemini', 'settings.json'),
    trusted: join(o.home ?? homedir(), '.gemini', 'trustedFolders.json'),
  };
}

export function connectGemini(o: ConnectOptions): FileChange[] {
  const f = files(o);
  const settings = readJson(f.settings);
  const { command, args, env } = bridgeCommand(o.launch, o.name, o.workspace);
  objectAt(settings, 'mcpServers')[SERVER] = { command, args, env, trust: true };
  const events = ['SessionStart', 'BeforeAgent', 'AfterTool', 'AfterAgent'];
  const entries: HookEntry[] = events.map((event) => ({
    event,
    matcher: event === 'AfterTool' ? '*' : undefined,
    hook: {
      name: `handoff-${event}`,
      type: 'command',
      command: hookCommand(o.launch, 'gemini', event, o.name, o.workspace),
      timeout: 5000,
    },
  }));
  setOurHooks(objectAt(settings, 'hooks'), entries);
  const trusted = readJson(f.trusted);
  const changes = [
    jsonChange(
      f.settings,
      `MCP server "${SERVER}" (trusted; bridge as ${o.name}) and ${entries.length} hooks (${events.join(', ')})`,
      settings,
    ),
  ];
  if (trusted[o.workspace] !== TRUST) {
    trusted[o.workspace] = TRUST;
    changes.push(jsonChange(f.trusted, `trusted the folder ${o.workspace}`, trusted));
  }
  return changes;
}

/** Leaves the folder's trust as it is: the user may have trusted it for other reasons. */
export function disconnectGemini(o: { workspace: string; home?: string }): FileChange[] {
  const f = files(o);
  const settings = readJson(f.settings);
  const servers = settings.mcpServers as Json | undefined;
  let what = '';
  if (servers && SERVER in servers) {
    delete servers[SERVER];
    if (Object.keys(servers).length === 0) delete settings.mcpServers;
    what = `removed MCP server "${SERVER}"`;
  }
  const n = removeOurHooksFrom(settings);
  if (n) what = `${what ? `${what} and ` : 'removed '}${n} Handoff hooks`;
  return what ? [jsonChange(f.settings, what, settings)] : [];
}

// VS Code's own agent: its hooks, in the folder's .github/hooks/handoff.json (a file of ours, in
// the format VS Code reads by default: `{ hooks: { Event: [{ type: "command", command }] } }`).
// Its MCP server is the editor's own (the extension's provider, identity `copilot`), so connect
// writes no server; the hooks name the same identity, so they surface into that session.
import { jsonChange, objectAt, readJson, type FileChange, type Json } from './files';
import { hookCommand, isOurHook } from './launch';
import { pathFor } from './platformPaths';
import type { ConnectOptions } from './types';

/** The identity the editor's MCP provider gives VS Code's agent (client/mcpProvider.ts). */
export const VSCODE_AGENT_NAME = 'copilot';
const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop'];

const file = (workspace: string, platform?: NodeJS.Platform) =>
  pathFor(platform).join(workspace, '.github', 'hooks', 'handoff.json');

/** Removes our commands from a flat hooks block; events left empty go. Returns how many went. */
function removeOurs(hooks: Json): number {
  let removed = 0;
  for (const [event, list] of Object.entries(hooks)) {
    if (!Array.isArray(list)) continue;
    const kept = (list as Json[]).filter((h) => !isOurHook(h?.command));
    removed += list.length - kept.length;
    if (kept.length) hooks[event] = kept;
    else delete hooks[event];
  }
  return removed;
}

export function connectVsCode(o: ConnectOptions): FileChange[] {
  const path = file(o.workspace, o.platform);
  const doc = readJson(path);
  const hooks = objectAt(doc, 'hooks');
  removeOurs(hooks);
  for (const event of EVENTS) {
    const list = Array.isArray(hooks[event]) ? (hooks[event] as Json[]) : [];
    list.push({
      type: 'command',
      command: hookCommand(
        o.launch,
        { cli: 'vscode', name: o.name ?? VSCODE_AGENT_NAME, workspace: o.workspace },
        event,
        o.platform,
      ),
      timeout: 5,
    });
    hooks[event] = list;
  }
  return [
    jsonChange(
      path,
      `${EVENTS.length} hooks for VS Code's agent as ${o.name ?? VSCODE_AGENT_NAME} (${EVENTS.join(', ')})`,
      doc,
    ),
  ];
}

export function disconnectVsCode(o: { workspace: string }): FileChange[] {
  const path = file(o.workspace);
  const doc = readJson(path);
  const hooks = doc.hooks;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return [];
  const n = removeOurs(hooks as Json);
  if (Object.keys(hooks).length === 0) delete doc.hooks;
  return n ? [jsonChange(path, `removed ${n} Handoff hooks`, doc)] : [];
}

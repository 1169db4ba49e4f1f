// How this window starts its hub (dist/hub.js): the arguments and the environment. The editor
// key travels in the environment only (see protocol/editorKey.ts for why not elsewhere).
import { join } from 'node:path';
import { EDITOR_KEY_ENV } from '../protocol/editorKey';
import type { HubLocation } from './location';

export interface HubLaunch {
  args: string[];
  env: NodeJS.ProcessEnv;
}

export function hubLaunch(
  location: HubLocation,
  extensionPath: string,
  editorKey: string,
  baseEnv: NodeJS.ProcessEnv,
  clientPid = process.pid,
): HubLaunch {
  const { workspace, store, socket } = location;
  // --stdio first: vscode-languageserver takes the first transport flag it sees, and would read
  // the hub's own `--socket PATH` as its TCP `--socket PORT`.
  const args = [
    join(extensionPath, 'dist', 'hub.js'),
    '--stdio',
    `--clientProcessId=${clientPid}`,
    '--workspace',
    workspace,
    '--store',
    store,
    '--socket',
    socket,
  ];
  // ELECTRON_RUN_AS_NODE: the editor's binary runs as Node.
  return { args, env: { ...baseEnv, ELECTRON_RUN_AS_NODE: '1', [EDITOR_KEY_ENV]: editorKey } };
}

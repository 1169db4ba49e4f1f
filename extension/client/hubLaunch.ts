// How this window starts its hub (dist/hub.js): the arguments and the environment. The editor
// key travels in the environment only (see protocol/editorKey.ts for why not elsewhere).
import { join } from 'node:path';
import { EDITOR_KEY_ENV } from '../protocol/editorKey';
import type { HubLocation } from './location';
import { compileCacheDir } from '../shared/paths';

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
  compileCache: () => string | undefined = compileCacheDir,
): HubLaunch {
  const { folder, store, socket } = location;
  // --stdio first: vscode-languageserver takes the first transport flag it sees, and would read
  // the hub's own `--socket PATH` as its TCP `--socket PORT`.
  const args = [
    join(extensionPath, 'dist', 'hub.js'),
    '--stdio',
    `--clientProcessId=${clientPid}`,
    // The window's folder: the hub serves its repository, and adopts the folder's old store.
    '--workspace',
    folder,
    '--store',
    store,
    '--socket',
    socket,
  ];
  // ELECTRON_RUN_AS_NODE: the editor's binary runs as Node. NODE_COMPILE_CACHE: the hub's 2 MB
  // bundle compiled once, not at every start (an empty store's start 0.22–0.25 s → 0.16–0.18 s).
  const cache = compileCache();
  return {
    args,
    env: {
      ...baseEnv,
      ELECTRON_RUN_AS_NODE: '1',
      [EDITOR_KEY_ENV]: editorKey,
      ...(cache ? { NODE_COMPILE_CACHE: cache } : {}),
    },
  };
}

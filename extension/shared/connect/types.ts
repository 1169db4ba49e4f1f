// What `handoff connect <cli>` and the editor's Connect commands need to know.
import type { Launch } from './launch';

export interface ConnectOptions {
  /** The hub's folder: the repository's main checkout in git, where folder-scoped config goes. */
  workspace: string;
  /** Pinned into the commands outside git only; in git the checkout names the agent (agentNames.ts). */
  name?: string;
  /** Whether the workspace is a git repository (configs then serve all its checkouts). */
  repository: boolean;
  launch: Launch;
  /** The user's home (tests point it at a temp dir). */
  home?: string;
  /** Codex's config home; default $CODEX_HOME or ~/.codex. */
  codexHome?: string;
  /** Whose paths and shells to write for; default this machine's (tests pass another). */
  platform?: NodeJS.Platform;
}

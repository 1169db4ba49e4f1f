// What `handoff connect <cli>` and the editor's Connect commands need to know.
import type { Launch } from './launch';

export interface ConnectOptions {
  /** The folder the agent runs in: its hub, and where folder-scoped config goes. */
  workspace: string;
  /** The identity the agent is on the bus. */
  name: string;
  launch: Launch;
  /** The user's home (tests point it at a temp dir). */
  home?: string;
  /** Codex's config home; default $CODEX_HOME or ~/.codex. */
  codexHome?: string;
}

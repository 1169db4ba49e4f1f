// Codex trusts a hook by key and hash, recorded in config.toml.
import type { Json } from './files';

export interface TrustTable {
  table: string;
  text: string;
  ours: boolean;
}

/** The trust tables for our hooks in hooks.json (recipe: see test/helpers/cli/NOTES.md). */
export function codexHookTrust(_hooksPath: string, _hooksDoc: Json): TrustTable[] {
  return [];
}

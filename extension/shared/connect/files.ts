// Reading and writing agent config files for connect/disconnect: every other entry is kept as it
// is, writes are atomic (a CLI never reads a half-written config), and each change is reported.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

export interface FileChange {
  path: string;
  /** What changed, in a few words ("added the handoff MCP server", "removed 5 hooks"). */
  what: string;
  before: string | undefined;
  after: string;
}

export function readText(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

export type Json = Record<string, unknown>;

/** A JSON object file; a missing or empty file is `{}`, anything else that is not an object is refused. */
export function readJson(path: string): Json {
  const text = readText(path);
  if (!text?.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(
      `${path} is not valid JSON (${(e as Error).message}); fix or remove it, then connect again. Nothing was changed.`,
      { cause: e },
    );
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new Error(`${path} does not hold a JSON object; nothing was changed.`);
  return v as Json;
}

/** The object at `key`, created if missing. */
export function objectAt(parent: Json, key: string): Json {
  const v = parent[key];
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Json;
  const fresh: Json = {};
  parent[key] = fresh;
  return fresh;
}

export function jsonChange(path: string, what: string, value: Json): FileChange {
  return { path, what, before: readText(path), after: `${JSON.stringify(value, null, 2)}\n` };
}

/** Two JSON texts that say the same (another program may have written it in its own layout). */
function sameJson(before: string | undefined, after: string): boolean {
  if (before === undefined) return false;
  try {
    return isDeepStrictEqual(JSON.parse(before), JSON.parse(after));
  } catch {
    return false; // not JSON (Codex's TOML): compared as text
  }
}

/** What a JSON document left with nothing in it is written as: connect never leaves one, disconnect may. */
const EMPTY_JSON = '{}\n';

/**
 * Writes the changes that change something; returns those. A JSON file that a change empties is
 * removed rather than left as `{}` (connect never writes an empty one: what empties it is a
 * disconnect taking out the last of what connect put there).
 */
export function applyChanges(changes: FileChange[]): FileChange[] {
  const real = changes.filter((c) => c.before !== c.after && !sameJson(c.before, c.after));
  for (const c of real) {
    if (c.after === EMPTY_JSON) {
      rmSync(c.path, { force: true });
      continue;
    }
    mkdirSync(dirname(c.path), { recursive: true });
    const mode = existsSync(c.path) ? statSync(c.path).mode & 0o777 : 0o600;
    const tmp = `${c.path}.handoff-${process.pid}.tmp`;
    writeFileSync(tmp, c.after, { mode });
    renameSync(tmp, c.path);
  }
  return real;
}

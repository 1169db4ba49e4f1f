// Which name an agent has on the bus, decided by where it runs rather than by its config: one
// setup per agent CLI serves every checkout of a repository, so the name cannot be baked into it.
// `connect --name` records a name for a checkout in the repository's common git dir (it outlives
// any worktree); a linked worktree's entry is bound to its branch, so a recycled worktree (removed,
// made again elsewhere on the same branch) is the same agent. Read on every bridge and hook start.
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { IDENTITY_PATTERN } from '../protocol/names';
import { findCheckout, linkedWorktrees, type Checkout } from './repository';

export interface NamedCheckout {
  cli: string;
  name: string;
  /** The main checkout's entry (whatever branch it is on). */
  main?: true;
  /** A linked worktree's branch: the binding that survives a recycle. */
  branch?: string;
  /** The worktree's folder when it was named: the binding of a detached worktree. */
  folder?: string;
}

const MAX_FILE_BYTES = 256 * 1024;
const MAX_ENTRIES = 2000;
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function agentNamesPath(commonDir: string): string {
  return join(commonDir, 'handoff', 'agents.json');
}

function valid(e: unknown): e is NamedCheckout {
  if (!e || typeof e !== 'object') return false;
  const x = e as Record<string, unknown>;
  const str = (v: unknown) => v === undefined || (typeof v === 'string' && v.length <= 4096);
  return (
    typeof x.cli === 'string' &&
    SAFE_NAME.test(x.cli) &&
    typeof x.name === 'string' &&
    IDENTITY_PATTERN.test(x.name) &&
    !x.name.includes('@') &&
    (x.main === undefined || x.main === true) &&
    str(x.branch) &&
    str(x.folder)
  );
}

/** The recorded names; a missing, oversized or damaged file names nobody (every name is then derived). */
export function readAgentNames(commonDir: string): NamedCheckout[] {
  let fd: number | undefined;
  try {
    fd = openSync(agentNamesPath(commonDir), 'r');
    const size = fstatSync(fd).size;
    if (size > MAX_FILE_BYTES) return [];
    const buf = Buffer.alloc(size);
    const doc = JSON.parse(buf.subarray(0, readSync(fd, buf, 0, size, 0)).toString('utf8')) as { agents?: unknown };
    return Array.isArray(doc.agents) ? doc.agents.slice(0, MAX_ENTRIES).filter(valid) : [];
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function slug(text: string): string {
  const s = text
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .replace(/-+$/, '');
  return s || 'worktree';
}

/** The entry that names `cli` in `checkout`, if any. */
function entryFor(entries: NamedCheckout[], cli: string, checkout: Checkout): NamedCheckout | undefined {
  const mine = entries.filter((e) => e.cli === cli);
  if (!checkout.linked) return mine.find((e) => e.main);
  return (
    (checkout.branch !== undefined ? mine.find((e) => !e.main && e.branch === checkout.branch) : undefined) ??
    mine.find((e) => !e.main && e.branch === undefined && e.folder === checkout.folder)
  );
}

/** The name nobody recorded: the CLI's own in the main checkout, `<cli>-<branch>` in a worktree. */
export function derivedName(cli: string, checkout: Checkout): string {
  if (!checkout.linked) return cli;
  return `${cli}-${slug(checkout.branch ?? basename(checkout.folder))}`.slice(0, 64).replace(/[._-]+$/, '');
}

export interface AgentName {
  name: string;
  /** `recorded` by connect --name, or `derived` from the checkout. */
  how: 'recorded' | 'derived';
  checkout: Checkout;
}

/** The name of `cli`'s agent in the checkout holding `cwd`; undefined outside git. */
export function agentNameAt(cli: string, cwd: string): AgentName | undefined {
  const checkout = findCheckout(cwd);
  return checkout && agentNameIn(cli, checkout);
}

/** The name of `cli`'s agent in `checkout`: recorded, else derived. */
export function agentNameIn(cli: string, checkout: Checkout): AgentName {
  const entry = entryFor(readAgentNames(checkout.commonDir), cli, checkout);
  return entry
    ? { name: entry.name, how: 'recorded', checkout }
    : { name: derivedName(cli, checkout), how: 'derived', checkout };
}

/** Which checkout an entry names, for messages: "the main checkout", "branch x", "folder y". */
function whereOf(e: NamedCheckout): string {
  return e.main ? 'the main checkout' : e.branch !== undefined ? `the worktree on branch ${e.branch}` : `${e.folder}`;
}

/**
 * Records `name` for `cli` in `checkout`. Refuses a name another checkout of the repository holds
 * for the same CLI while that checkout still exists (two worktrees never silently share a name);
 * a name held by a worktree that is gone (removed, its branch deleted or moved on) is taken over.
 * Renaming the agent of a checkout that already has a recorded name takes `rename` (a typo must
 * not silently move an agent's mail to a new identity).
 */
export function recordAgentName(
  cli: string,
  name: string,
  checkout: Checkout,
  rename = false,
): { changed: boolean; path: string; was?: string } {
  const path = agentNamesPath(checkout.commonDir);
  const entries = readAgentNames(checkout.commonDir);
  const mine = entryFor(entries, cli, checkout);
  if (mine?.name === name) return { changed: false, path };
  if (mine && !rename)
    throw new Error(
      `the ${cli} agent in ${whereOf(mine)} is already "${mine.name}"; mail to "${mine.name}" stays with that name. To rename it to "${name}", connect again with --rename`,
    );
  const live = liveBindings(checkout);
  const holder = entries.find(
    (e) => e !== mine && e.cli === cli && e.name === name && (e.main || live.has(bindingOf(e))),
  );
  if (holder)
    throw new Error(
      `"${name}" already names the ${cli} agent in ${whereOf(holder)} of this repository; choose another name (each worktree's agent has its own)`,
    );
  const kept = entries.filter((e) => e !== mine && !(e.cli === cli && e.name === name));
  const entry: NamedCheckout = checkout.linked
    ? checkout.branch !== undefined
      ? { cli, name, branch: checkout.branch }
      : { cli, name, folder: checkout.folder }
    : { cli, name, main: true };
  // Never recursive: only a git dir that exists gets a folder of ours, nothing is made around it.
  if (!existsSync(join(checkout.commonDir, 'handoff'))) mkdirSync(join(checkout.commonDir, 'handoff'), { mode: 0o755 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ agents: [...kept, entry] }, null, 2)}\n`);
  renameSync(tmp, path);
  return { changed: true, path, ...(mine ? { was: mine.name } : {}) };
}

function bindingOf(e: NamedCheckout): string {
  return e.branch !== undefined ? `branch:${e.branch}` : `folder:${e.folder}`;
}

/** The bindings of the repository's worktrees that exist now. */
function liveBindings(checkout: Checkout): Set<string> {
  const live = new Set<string>();
  for (const folder of linkedWorktrees(checkout.commonDir)) {
    const c = findCheckout(folder);
    if (!c) continue;
    live.add(`folder:${c.folder}`);
    if (c.branch !== undefined) live.add(`branch:${c.branch}`);
  }
  return live;
}

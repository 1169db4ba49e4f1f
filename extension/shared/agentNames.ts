// Which name an agent has on the bus, decided by where it runs rather than by its config: one
// setup per agent CLI serves every checkout of a repository, so the name cannot be baked into it.
// `connect --name` records a name for a checkout in the repository's common git dir (it outlives
// any worktree); a linked worktree's entry is bound to its branch, so a recycled worktree (removed,
// made again elsewhere on the same branch) is the same agent. Read on every bridge and hook start.
//
// One writer at a time: connect takes the file's own lock (shared/processLock.ts) and reads, merges
// and writes under it, durably (the file's fsync, a rename, the folder's fsync). Two connects at once
// lost a name, and two first connects threw EEXIST, when each read the file and wrote its own copy.
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { IDENTITY_PATTERN } from '../protocol/names';
import { waitForProcessLock } from './processLock';
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

/** Why the file is not a names file we wrote, or the entries in it; undefined when there is none. */
function parseNames(commonDir: string): { entries: NamedCheckout[] } | { damage: string } | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(agentNamesPath(commonDir), 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { damage: (e as Error).message };
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_FILE_BYTES) return { damage: `${size} bytes, more than the ${MAX_FILE_BYTES} it may hold` };
    const buf = Buffer.alloc(size);
    let doc: { agents?: unknown };
    try {
      doc = JSON.parse(buf.subarray(0, readSync(fd, buf, 0, size, 0)).toString('utf8')) as { agents?: unknown };
    } catch (e) {
      return { damage: `not JSON (${(e as Error).message})` };
    }
    if (!doc || !Array.isArray(doc.agents)) return { damage: 'no "agents" list in it' };
    if (doc.agents.length > MAX_ENTRIES)
      return { damage: `${doc.agents.length} entries, more than the ${MAX_ENTRIES} it may hold` };
    const bad = doc.agents.findIndex((e) => !valid(e));
    if (bad >= 0) return { damage: `entry ${bad + 1} is not a name this version records` };
    return { entries: doc.agents as NamedCheckout[] };
  } finally {
    closeSync(fd);
  }
}

/**
 * The recorded names; a missing or damaged file names nobody (every name is then derived). Damage
 * is refused where the file is written (recordAgentName), with a copy kept.
 */
export function readAgentNames(commonDir: string): NamedCheckout[] {
  const parsed = parseNames(commonDir);
  return parsed && 'entries' in parsed ? parsed.entries : [];
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

/** The CLIs whose agents get derived names in a checkout (VS Code's agent is named outside git only). */
const DERIVING_CLIS = ['claude', 'codex', 'gemini'];

/** `<cli>-<what the checkout is called>`, and whether that spelling loses anything of it. */
function plainDerived(cli: string, checkout: Checkout): { name: string; exact: boolean } {
  if (!checkout.linked) return { name: cli, exact: true };
  const what = checkout.branch ?? basename(checkout.folder);
  const name = `${cli}-${slug(what)}`.slice(0, 64).replace(/[._-]+$/, '');
  // A branch spelled as it is is unique; a slugged or cut one (feat/x beside feat-x), or a detached
  // worktree's folder name (two folders called tmp), may not be.
  return { name, exact: checkout.branch !== undefined && name === `${cli}-${checkout.branch}` };
}

/** The same name with a short hash of what the checkout is, so it is its own. */
function hashed(cli: string, checkout: Checkout): string {
  const what = checkout.branch !== undefined ? `branch:${checkout.branch}` : `folder:${checkout.folder}`;
  const h = createHash('sha256').update(what).digest('hex').slice(0, 8);
  return `${plainDerived(cli, checkout)
    .name.slice(0, 55)
    .replace(/[._-]+$/, '')}-${h}`;
}

/**
 * The name nobody recorded: the CLI's own in the main checkout, `<cli>-<branch>` in a worktree —
 * with a short hash when that would be another agent's name: a recorded one, or another live
 * worktree's whose branch or folder slugs to the same (the branch spelled exactly keeps it).
 */
export function derivedName(
  cli: string,
  checkout: Checkout,
  recorded: NamedCheckout[] = readAgentNames(checkout.commonDir),
): string {
  const plain = plainDerived(cli, checkout);
  if (!checkout.linked) return plain.name;
  if (recorded.some((e) => e.name === plain.name)) return hashed(cli, checkout);
  if (plain.exact) return plain.name;
  const clash = otherCheckouts(checkout).some((c) => {
    const theirs = plainDerived(cli, c);
    return theirs.name === plain.name && !entryFor(recorded, cli, c);
  });
  return clash ? hashed(cli, checkout) : plain.name;
}

/** The repository's other live checkouts: the main one and every linked worktree but `checkout`. */
function otherCheckouts(checkout: Checkout): Checkout[] {
  const main = findCheckout(checkout.root);
  const all = [...(main && !main.linked ? [main] : [])];
  for (const folder of linkedWorktrees(checkout.commonDir)) {
    const c = findCheckout(folder);
    if (c?.linked && c.folder === folder) all.push(c);
  }
  return all.filter((c) => c.folder !== checkout.folder);
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
  const entries = readAgentNames(checkout.commonDir);
  const entry = entryFor(entries, cli, checkout);
  return entry
    ? { name: entry.name, how: 'recorded', checkout }
    : { name: derivedName(cli, checkout, entries), how: 'derived', checkout };
}

/** Which checkout an entry names, for messages: "the main checkout", "branch x", "folder y". */
function whereOf(e: NamedCheckout): string {
  return e.main ? 'the main checkout' : e.branch !== undefined ? `the worktree on branch ${e.branch}` : `${e.folder}`;
}

export class AgentNamesRefused extends Error {}

/** How long connect waits for another connect that holds the names file. */
const LOCK_WAIT_MS = 10_000;

/**
 * Records `name` for `cli` in `checkout`. Refuses a name another agent of the repository has, of any
 * CLI, while its checkout still exists — recorded, or derived for a checkout that has none recorded
 * (two agents never silently share an identity); a name held by a worktree that is gone (removed, its
 * branch deleted or moved on) is taken over, and the entries of such worktrees are dropped. Renaming
 * the agent of a checkout that already has a recorded name takes `rename` (a typo must not silently
 * move an agent's mail to a new identity). A damaged file is refused, with a copy kept beside it.
 */
export async function recordAgentName(
  cli: string,
  name: string,
  checkout: Checkout,
  rename = false,
): Promise<{ changed: boolean; path: string; was?: string }> {
  const path = agentNamesPath(checkout.commonDir);
  // Never recursive: only a git dir that exists gets a folder of ours, nothing is made around it.
  // Made before the lock, which is named by the folder's real path.
  try {
    mkdirSync(dirname(path), { mode: 0o755 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const lock = await waitForProcessLock(path, LOCK_WAIT_MS);
  if (!lock.owned)
    throw new AgentNamesRefused(
      `${path} is being written by another connect${lock.holder ? ` (pid ${lock.holder.pid})` : ''} that has not finished in ${LOCK_WAIT_MS / 1000} s; nothing was changed, connect again`,
    );
  try {
    return recordLocked(cli, name, checkout, rename, path);
  } finally {
    lock.release();
  }
}

function recordLocked(
  cli: string,
  name: string,
  checkout: Checkout,
  rename: boolean,
  path: string,
): { changed: boolean; path: string; was?: string } {
  const parsed = parseNames(checkout.commonDir);
  if (parsed && 'damage' in parsed) {
    const copy = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    copyFileSync(path, copy);
    throw new AgentNamesRefused(
      `${path} is damaged (${parsed.damage}); nothing was changed. A copy is kept at ${copy}. Fix the file or remove it (the names in it are then derived again), and connect again`,
    );
  }
  const entries = parsed?.entries ?? [];
  const mine = entryFor(entries, cli, checkout);
  if (mine?.name === name) return { changed: false, path };
  if (mine && !rename)
    throw new AgentNamesRefused(
      `the ${cli} agent in ${whereOf(mine)} is already "${mine.name}"; mail to "${mine.name}" stays with that name. To rename it to "${name}", connect again with --rename`,
    );
  const live = liveBindings(checkout);
  const inForce = (e: NamedCheckout) => e.main || live.has(bindingOf(e));
  const holder = entries.find((e) => e !== mine && e.name === name && inForce(e));
  if (holder)
    throw new AgentNamesRefused(
      `"${name}" already names the ${holder.cli} agent in ${whereOf(holder)} of this repository; choose another name (each agent has its own)`,
    );
  const others = [checkout, ...otherCheckouts(checkout)];
  for (const c of others)
    for (const other of DERIVING_CLIS) {
      if (c.folder === checkout.folder && other === cli) continue;
      if (entryFor(entries, other, c)) continue;
      if (derivedName(other, c, entries) === name)
        throw new AgentNamesRefused(
          `"${name}" is the name the ${other} agent in ${c.linked ? `the worktree ${c.folder}` : 'the main checkout'} has (derived, unrecorded); choose another name, or record another one for that agent first`,
        );
    }
  // Dropped: a worktree removed whose branch is gone too (a branch that remains may be made a
  // worktree again, the recycle), and a name taken over.
  const kept = entries.filter(
    (e) => e !== mine && e.name !== name && (inForce(e) || branchExists(checkout.commonDir, e.branch)),
  );
  const entry: NamedCheckout = checkout.linked
    ? checkout.branch !== undefined
      ? { cli, name, branch: checkout.branch }
      : { cli, name, folder: checkout.folder }
    : { cli, name, main: true };
  const text = `${JSON.stringify({ agents: [...kept, entry] }, null, 2)}\n`;
  // Never written past what is read back: a name recorded is a name in force.
  if (kept.length + 1 > MAX_ENTRIES || Buffer.byteLength(text) > MAX_FILE_BYTES)
    throw new AgentNamesRefused(
      `${path} holds ${kept.length} names of live checkouts, as many as it keeps (${MAX_ENTRIES} entries, ${MAX_FILE_BYTES / 1024} KiB); nothing was changed. Remove worktrees no longer used, or names from the file, and connect again`,
    );
  writeDurably(path, text);
  return { changed: true, path, ...(mine ? { was: mine.name } : {}) };
}

/** The file's new text, whole or not at all, on disk when this returns. */
function writeDurably(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  try {
    const dir = openSync(dirname(path), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // A folder that cannot be opened to be synced (Windows): the rename is left to the file system's log.
  }
}

/** Whether `refs/heads/<branch>` still exists, loose or packed. */
function branchExists(commonDir: string, branch: string | undefined): boolean {
  if (branch === undefined) return false;
  try {
    closeSync(openSync(join(commonDir, 'refs', 'heads', branch), 'r'));
    return true;
  } catch {
    // not loose: packed?
  }
  let fd: number | undefined;
  try {
    fd = openSync(join(commonDir, 'packed-refs'), 'r');
    const size = Math.min(fstatSync(fd).size, 8 * 1024 * 1024);
    const buf = Buffer.alloc(size);
    const text = buf.subarray(0, readSync(fd, buf, 0, size, 0)).toString('utf8');
    return text.split('\n').some((l) => l.endsWith(` refs/heads/${branch}`));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
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

// Which git repository, and which of its checkouts, a folder is in — read from git's own files, not
// by running git: bridges and hooks ask on every start, on an agent's hot path. A linked worktree's
// `.git` is a file naming its private git dir, whose `commondir` names the repository's; the main
// checkout's `.git` is that common dir itself (git-worktree(1), gitrepository-layout(5)).
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

/** One checkout of a repository: the main one, or a linked worktree anywhere on disk. */
export interface Checkout {
  /** The checkout's top folder (holds `.git`). */
  folder: string;
  /** The repository's shared git dir (`<main>/.git`, or a bare repository's own folder). */
  commonDir: string;
  /** The main checkout's folder (a bare repository's folder when there is none): the repository's name. */
  root: string;
  /** A linked worktree (`git worktree add`), as opposed to the main checkout. */
  linked: boolean;
  /** The branch checked out, or undefined when detached. */
  branch?: string;
}

/** Git's small files are read with a bound: a hostile or damaged one cannot make us read much. */
const MAX_GIT_FILE = 4096;

function readSmall(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(MAX_GIT_FILE);
    return buf.subarray(0, readSync(fd, buf, 0, MAX_GIT_FILE, 0)).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function kindOf(path: string): 'dir' | 'file' | undefined {
  try {
    const st = statSync(path);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : undefined;
  } catch {
    return undefined;
  }
}

/** `ref: refs/heads/<branch>` in HEAD, else detached. */
function branchOf(gitDir: string): string | undefined {
  const head = readSmall(join(gitDir, 'HEAD'))?.trim();
  const m = head && /^ref: refs\/heads\/(.+)$/.exec(head);
  return m ? m[1] : undefined;
}

/** The path a git link file names (`gitdir: <path>`): the rest of its first line, a newline in a path kept. */
function linkTarget(text: string | undefined, prefix: string): string | undefined {
  if (text === undefined || !text.startsWith(prefix)) return undefined;
  const path = text.slice(prefix.length).replace(/\r?\n$/, '');
  return path === '' ? undefined : path;
}

/**
 * A main checkout's name is the folder holding its `.git`; a bare repository is its own — unless it
 * is the "bare repository with worktrees" layout (`project/.bare`, and `project/.git` a file saying
 * `gitdir: ./.bare`), where `project` is the repository's folder for every worktree as for itself.
 */
export function repositoryRoot(commonDir: string): string {
  if (basename(commonDir) === '.git') return dirname(commonDir);
  const parent = dirname(commonDir);
  const link = linkTarget(readSmall(join(parent, '.git')), 'gitdir: ');
  return link !== undefined && resolve(parent, link) === commonDir ? parent : commonDir;
}

/** What git itself asks of a git dir (setup.c, is_git_directory): HEAD, objects and refs. */
function isGitDir(dir: string): boolean {
  return (
    kindOf(join(dir, 'HEAD')) === 'file' &&
    kindOf(join(dir, 'objects')) === 'dir' &&
    kindOf(join(dir, 'refs')) === 'dir'
  );
}

/**
 * The checkout `folder` is the top of, or undefined when `folder` holds no `.git` that git would
 * take: an empty or stray `.git` folder, or a worktree whose repository is gone, names none.
 */
function checkoutAt(folder: string): Checkout | undefined {
  const dotGit = join(folder, '.git');
  const kind = kindOf(dotGit);
  if (kind === 'dir')
    return isGitDir(dotGit)
      ? { folder, commonDir: dotGit, root: folder, linked: false, branch: branchOf(dotGit) }
      : undefined;
  if (kind !== 'file') return undefined;
  const link = linkTarget(readSmall(dotGit), 'gitdir: ');
  if (link === undefined) return undefined;
  // Relative links (worktree.useRelativePaths, git 2.48) are relative to the folder holding `.git`.
  const gitDir = resolve(folder, link);
  const common = linkTarget(readSmall(join(gitDir, 'commondir')), '');
  // No commondir: a submodule, a separate git dir or a bare repository's folder — a repository of
  // its own, named by its folder (repositoryRoot: `project` for `project/.git` → `./.bare`).
  if (!common)
    return isGitDir(gitDir)
      ? { folder, commonDir: gitDir, root: folder, linked: false, branch: branchOf(gitDir) }
      : undefined;
  const commonDir = isAbsolute(common) ? common : resolve(gitDir, common);
  if (kindOf(join(gitDir, 'HEAD')) !== 'file' || !isGitDir(commonDir)) return undefined;
  return { folder, commonDir, root: repositoryRoot(commonDir), linked: true, branch: branchOf(gitDir) };
}

/** The checkout that holds `dir` (the nearest `.git` above it), or undefined outside git. */
export function findCheckout(dir: string): Checkout | undefined {
  for (let d = dir; ;) {
    const found = checkoutAt(d);
    if (found) return found;
    const parent = dirname(d);
    if (parent === d) return undefined;
    d = parent;
  }
}

/** The folders of the repository's linked worktrees that still exist (`<common>/worktrees/*\/gitdir`). */
export function linkedWorktrees(commonDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(commonDir, 'worktrees'));
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    const own = join(commonDir, 'worktrees', n);
    const link = linkTarget(readSmall(join(own, 'gitdir')), '');
    // A relative link (worktree.useRelativePaths) is relative to the worktree's own git dir, never
    // to this process's folder: read so, a live worktree looked removed.
    const dotGit = link === undefined ? undefined : resolve(own, link);
    return dotGit && kindOf(dotGit) === 'file' ? [dirname(dotGit)] : [];
  });
}

// Which repository, checkout and name a folder has, against real git: worktrees inside and outside
// the repository, subfolders, a detached worktree, a submodule-like separate git dir, and the names
// connect records (bound to a worktree's branch, never shared by two live worktrees).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { agentNameAt, recordAgentName } from '../../extension/shared/agentNames';
import { findWorkspace, hubSocketPath, workspaceOf } from '../../extension/shared/paths';
import { findCheckout, linkedWorktrees } from '../../extension/shared/repository';
import { tempDir } from '../helpers/hubProcess';
import { git } from '../helpers/git';

function repo() {
  const base = realpathSync(tempDir('git'));
  const root = join(base, 'R');
  mkdirSync(join(root, 'packages', 'web'), { recursive: true });
  writeFileSync(join(root, 'packages', 'web', 'package.json'), '{}');
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'commit', '-q', '--allow-empty', '-m', 'init');
  const inside = join(root, '.claude', 'worktrees', 'wt-bob');
  const outside = join(base, 'alice-1');
  const vscode = join(`${root}.worktrees`, 'fix-parser');
  git(root, 'worktree', 'add', '-q', '-b', 'wt-bob', inside);
  git(root, 'worktree', 'add', '-q', '-b', 'alice', outside);
  git(root, 'worktree', 'add', '-q', '-b', 'agents/fix-parser', vscode);
  return { base, root, inside, outside, vscode };
}

describe('one bus per repository: where a folder belongs', () => {
  it('every checkout and subfolder of a repository has its main checkout as workspace, one hub socket', () => {
    const r = repo();
    const folders = [r.root, join(r.root, 'packages', 'web'), r.inside, r.outside, r.vscode];
    for (const f of folders) {
      assert.equal(findWorkspace(f), r.root, `cwd ${f}`);
      assert.equal(workspaceOf(f), r.root, `--workspace ${f}`);
    }
    assert.equal(new Set(folders.map((f) => hubSocketPath(workspaceOf(f)))).size, 1);
    // What git itself says, for each: the same common dir.
    for (const f of folders)
      assert.equal(
        realpathSync(resolve(f, git(f, 'rev-parse', '--git-common-dir').trim())),
        realpathSync(findCheckout(f)!.commonDir),
      );
    assert.deepEqual(linkedWorktrees(findCheckout(r.root)!.commonDir).sort(), [r.inside, r.outside, r.vscode].sort());
  });

  it('outside git a folder keeps the marker rule; a separate git dir (submodule-like) is a repository of its own', () => {
    const plain = realpathSync(tempDir('plain'));
    mkdirSync(join(plain, 'sub'));
    writeFileSync(join(plain, 'package.json'), '{}');
    assert.equal(findWorkspace(join(plain, 'sub')), plain);
    assert.equal(workspaceOf(join(plain, 'sub')), join(plain, 'sub'), 'a folder named explicitly is itself');
    const sep = realpathSync(tempDir('sep'));
    mkdirSync(join(sep, 'work'));
    git(sep, 'init', '-q', '--separate-git-dir', join(sep, 'gitdir'), 'work');
    const c = findCheckout(join(sep, 'work'))!;
    assert.equal(c.root, join(sep, 'work'));
    assert.equal(c.linked, false);
  });

  it('a stray or empty .git folder, or a worktree whose repository is gone, makes no repository (git takes neither)', () => {
    const base = realpathSync(tempDir('stray'));
    mkdirSync(join(base, '.git')); // an empty .git above the folder, as in a shared temp folder
    mkdirSync(join(base, 'proj'));
    writeFileSync(join(base, 'proj', 'package.json'), '{}');
    assert.equal(findCheckout(join(base, 'proj')), undefined);
    assert.equal(findWorkspace(join(base, 'proj')), join(base, 'proj'), 'the marker rule, as outside git');
    const r = repo();
    rmSync(join(r.root, '.git'), { recursive: true, force: true }); // the repository deleted, its worktree left
    assert.equal(findCheckout(r.outside), undefined);
    assert.equal(agentNameAt('claude', r.outside), undefined);
    assert.equal(existsSync(join(r.root, '.git')), false, 'nothing was made where the repository was');
  });

  it("git's relative worktree links (worktree.useRelativePaths, written by hand in git's format where git is older than 2.48) are read from the git dir, never the process's folder", () => {
    const r = repo();
    const common = join(r.root, '.git');
    for (const wt of [r.inside, r.outside]) {
      const own = resolve(
        wt,
        readFileSync(join(wt, '.git'), 'utf8')
          .replace(/^gitdir: /, '')
          .trim(),
      );
      writeFileSync(join(wt, '.git'), `gitdir: ${relative(wt, own)}\n`);
      writeFileSync(join(own, 'gitdir'), `${relative(own, join(wt, '.git'))}\n`);
    }
    git(r.root, 'config', 'extensions.relativeWorktrees', 'true');
    const cwd = process.cwd();
    try {
      process.chdir(r.base); // anywhere but the git dir
      const live = linkedWorktrees(common).map((f) => realpathSync(f));
      assert.ok(live.includes(r.inside) && live.includes(r.outside), live.join(' '));
    } finally {
      process.chdir(cwd);
    }
    assert.equal(findWorkspace(r.outside), r.root);
    assert.equal(findCheckout(r.outside)!.branch, 'alice');
  });

  it('the bare repository with worktrees (project/.bare, project/.git a file `gitdir: ./.bare`) is one repository, one hub', () => {
    const base = realpathSync(tempDir('bare'));
    const seed = join(base, 'seed');
    mkdirSync(seed);
    git(seed, 'init', '-q', '-b', 'main');
    git(seed, 'commit', '-q', '--allow-empty', '-m', 'init');
    const project = join(base, 'project');
    mkdirSync(project);
    git(project, 'clone', '-q', '--bare', seed, '.bare');
    writeFileSync(join(project, '.git'), 'gitdir: ./.bare\n');
    git(project, 'worktree', 'add', '-q', 'main');
    git(project, 'worktree', 'add', '-q', '-b', 'feature', 'feature');
    const folders = [project, join(project, 'main'), join(project, 'feature')];
    for (const f of folders) assert.equal(workspaceOf(f), project, f);
    assert.equal(new Set(folders.map((f) => hubSocketPath(workspaceOf(f)))).size, 1);
    assert.equal(
      realpathSync(git(join(project, 'feature'), 'rev-parse', '--git-common-dir').trim()),
      join(project, '.bare'),
    );
  });

  it('a newline in the repository path: its worktrees are still of one repository', () => {
    const base = realpathSync(tempDir('newline'));
    const root = join(base, 'two\nlines');
    mkdirSync(root);
    git(root, 'init', '-q', '-b', 'main');
    git(root, 'commit', '-q', '--allow-empty', '-m', 'init');
    const wt = join(base, 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'wt', wt);
    assert.equal(findWorkspace(wt), root);
    assert.equal(workspaceOf(wt), workspaceOf(root));
    assert.deepEqual(
      linkedWorktrees(join(root, '.git')).map((f) => realpathSync(f)),
      [wt],
    );
  });

  it('names: the main checkout is the CLI, a worktree <cli>-<branch>, a recorded name follows the branch to a new path', async () => {
    const r = repo();
    assert.equal(agentNameAt('claude', r.root)!.name, 'claude');
    assert.equal(agentNameAt('claude', join(r.root, 'packages', 'web'))!.name, 'claude');
    assert.equal(agentNameAt('claude', r.vscode)!.name, 'claude-agents-fix-parser');
    assert.equal(agentNameAt('codex', r.inside)!.name, 'codex-wt-bob');

    await recordAgentName('claude', 'bob', findCheckout(r.inside)!);
    assert.deepEqual(
      [agentNameAt('claude', r.inside)!.name, agentNameAt('claude', r.inside)!.how],
      ['bob', 'recorded'],
    );
    assert.equal(agentNameAt('codex', r.inside)!.name, 'codex-wt-bob', 'per CLI');
    // Two live worktrees never share a name.
    await assert.rejects(
      () => recordAgentName('claude', 'bob', findCheckout(r.outside)!),
      /"bob" already names the claude agent in the worktree on branch wt-bob/,
    );
    // The recycle: removed, made again elsewhere on the same branch.
    git(r.root, 'worktree', 'remove', '--force', r.inside);
    const again = join(r.base, 'elsewhere', 'wt-bob');
    git(r.root, 'worktree', 'add', '-q', again, 'wt-bob');
    assert.equal(agentNameAt('claude', again)!.name, 'bob');
    // A name whose worktree is gone (and whose branch no worktree has) may be taken over.
    git(r.root, 'worktree', 'remove', '--force', again);
    await recordAgentName('claude', 'bob', findCheckout(r.outside)!);
    assert.equal(agentNameAt('claude', r.outside)!.name, 'bob');
  });

  it('names: a detached worktree is bound to its folder; a damaged names file names nobody', async () => {
    const r = repo();
    const detached = join(r.base, 'detached');
    git(r.root, 'worktree', 'add', '-q', '--detach', detached);
    assert.equal(agentNameAt('gemini', detached)!.name, 'gemini-detached');
    await recordAgentName('gemini', 'dee', findCheckout(detached)!);
    assert.equal(agentNameAt('gemini', detached)!.name, 'dee');
    writeFileSync(
      join(findCheckout(r.root)!.commonDir, 'handoff', 'agents.json'),
      '{"agents": [{"cli": "gemini", "nam',
    );
    assert.equal(agentNameAt('gemini', detached)!.name, 'gemini-detached');
    writeFileSync(
      join(findCheckout(r.root)!.commonDir, 'handoff', 'agents.json'),
      JSON.stringify({ agents: [{ cli: 'gemini', name: 'x@evil', main: true }] }),
    );
    assert.equal(agentNameAt('gemini', r.root)!.name, 'gemini', 'a name with a node is not a local name');
  });
});

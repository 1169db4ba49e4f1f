// The CLI's way in is ours: outside this checkout `npx handoff` fetches an unrelated registry
// package of that name. So no instruction a user reads may resolve to a registry lookup, and the
// walkthrough's commands, typed into a terminal the way the editor sets it up (our launcher folder
// first on PATH), from a folder outside the checkout with an empty, offline npm cache, are answered
// by our program.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { commandDir, launcherDir, refreshLaunchers } from '../../extension/shared/connect/launchers';
import { DIST, NODE, ROOT, tempDir } from '../helpers/hubProcess';

/** Everything a user is told to type: README, docs, the walkthrough, the marketplace page. */
function instructions(): { file: string; line: string }[] {
  const md = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(dir, f));
  const files = ['README.md', ...md('docs'), ...md('media')];
  const texts = files.map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    contributes: { walkthroughs: { steps: { description: string }[] }[] };
  };
  for (const w of manifest.contributes.walkthroughs)
    texts.push({ file: 'package.json walkthrough', text: w.steps.map((s) => s.description).join('\n') });
  return texts.flatMap(({ file, text }) => text.split('\n').map((line) => ({ file, line })));
}

/** The shell lines of a Markdown file's fenced blocks. */
function shellLines(file: string): string[] {
  const blocks = readFileSync(join(ROOT, file), 'utf8').match(/```sh\n[\s\S]*?```/g) ?? [];
  return blocks.flatMap((b) => b.split('\n').slice(1, -1)).filter((l) => l.trim() && !l.startsWith('#'));
}

describe('the handoff command a user is told to run', () => {
  it('no instruction runs npx/npm exec handoff except inside this checkout', () => {
    const registry = instructions().filter(
      ({ line }) => /\b(npx|npm exec)( --)? handoff\b/.test(line) && !/checkout/.test(line),
    );
    assert.deepEqual(registry, [], 'these resolve to the registry package "handoff" outside this checkout');
  });

  it('the walkthrough’s commands, from a folder outside the checkout with an empty offline npm cache, are ours', () => {
    const home = tempDir('wayin-home');
    const folder = tempDir('wayin-folder');
    const cache = tempDir('wayin-npm-cache');
    const data = join(home, '.local', 'share');
    const env = {
      HOME: home,
      XDG_DATA_HOME: data,
      // The terminal as the editor makes it: our launcher folder first, then the user's PATH, on
      // which npx would reach the registry.
      PATH: [
        commandDir(launcherDir({ XDG_DATA_HOME: data })),
        dirname(NODE),
        '/usr/local/bin',
        '/usr/bin',
        '/bin',
      ].join(':'),
      npm_config_cache: cache,
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
    };
    // What every activation of the extension does (extension.ts).
    refreshLaunchers(launcherDir(env), NODE, DIST, false);
    const lines = shellLines('media/walkthrough/connect.md');
    assert.ok(lines.length >= 2, `the walkthrough shows its commands: ${lines.join(' | ')}`);
    const said = lines.map((line) => {
      const out = execFileSync('/bin/sh', ['-c', line], { cwd: folder, env, encoding: 'utf8', stdio: 'pipe' });
      return { line, out };
    });
    assert.match(said[0].out, /Claude Code is connected for .* as "reviewer"/, said[0].line);
    assert.match(said[1].out, /removed MCP server "handoff"/, said[1].line);
    assert.deepEqual(readdirSync(cache), [], 'nothing was looked up in (or cached from) the registry');
  });
});

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
import { createRequire } from 'node:module';
import type * as TS from 'typescript';
import { commandDir, launcherDir, refreshLaunchers } from '../../extension/shared/connect/launchers';
import { connectAgent } from '../helpers/agent';
import { DIST, NODE, ROOT, tempDir } from '../helpers/hubProcess';

// The compiler's parser, loaded from node_modules rather than bundled into this test.
const ts = createRequire(__filename)('typescript') as typeof TS;

/** A command that fetches the registry's `handoff` (or `handoff-mcp`): a stranger's package, not ours. */
const REGISTRY =
  /\b(?:npx|npm\s+exec|npm\s+(?:i|install)(?:\s+-g)?|pnpm\s+dlx|yarn\s+dlx|bunx)(?:\s+(?:-y|--yes|--))*\s+handoff\b/;

/** Every string literal and template in the program's own sources: what it may print or answer. */
function programStrings(): { file: string; text: string }[] {
  const found: { file: string; text: string }[] = [];
  const files = readdirSync(join(ROOT, 'extension'), { recursive: true, encoding: 'utf8' }).filter((f) =>
    /\.ts$/.test(f),
  );
  for (const f of files) {
    const file = join('extension', f);
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
    const visit = (node: TS.Node): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push({ file, text: node.text });
      else if (ts.isTemplateExpression(node))
        found.push({ file, text: [node.head.text, ...node.templateSpans.map((s) => `…${s.literal.text}`)].join('') });
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

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

  it("no string the program prints or answers fetches the registry's handoff", () => {
    const strings = programStrings();
    assert.ok(strings.length > 1000, `the sources were read (${strings.length} strings)`);
    assert.deepEqual(
      strings.filter(({ text }) => REGISTRY.test(text)),
      [],
      'these send a user or an agent to the registry package "handoff", a stranger\'s',
    );
  });

  it("the bridge's answer with no hub names our own CLI, which answers", async () => {
    const run = tempDir('wayin-nohub');
    const agent = await connectAgent({
      socket: join(run, 'nobody.sock'),
      name: 'lonely',
      live: false,
      env: { HANDOFF_BRIDGE_GAP_MS: '300' },
    });
    try {
      const r = await agent.call('whoami', {});
      const text = JSON.stringify(r.content);
      assert.equal(r.isError, true, text);
      assert.match(text, /No Handoff hub for the workspace/);
      assert.doesNotMatch(text, REGISTRY);
      const named = /run `\\"([^"`]+)\\" \\"([^"`]+)\\" hub --workspace/.exec(text);
      assert.ok(named, `it names a command: ${text}`);
      const help = execFileSync(named[1], [named[2], '--help'], { encoding: 'utf8' });
      assert.match(help, /^usage: handoff <command>/, 'the command it names is our CLI');
    } finally {
      await agent.close();
    }
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

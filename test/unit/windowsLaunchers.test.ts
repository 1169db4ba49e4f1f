// Windows' launchers and command lines, run here on Linux (#38): what `connect` writes there, read
// back through small models of the two parsers that will read it — cmd.exe reading a `.cmd` line
// (percent expansion, then quotes and carets and operators) and PowerShell reading a command line
// (`&`, single-quoted literals). The models are the documented rules, not Windows; every case is one
// where the Linux answer fails under the same model.
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { claudeFiles, connectClaude } from '../../extension/shared/connect/claude';
import { codexFiles, connectCodex } from '../../extension/shared/connect/codex';
import { codexHookTrust } from '../../extension/shared/connect/codexTrust';
import { connectGemini, geminiSettingsPath } from '../../extension/shared/connect/gemini';
import { hookCommand, isOurHook, type Launch } from '../../extension/shared/connect/launch';
import { cmdLaunchers, refreshLaunchers } from '../../extension/shared/connect/launchers';
import { batchQuoted, batchSafeArg, psCommand, psQuote, shQuote } from '../../extension/shared/connect/quote';
import { hookShell, launcherKind } from '../../extension/shared/platform/launcher';
import { tempDir } from '../helpers/hubProcess';

/** What cmd.exe makes of one line of a `.cmd` file: its words, and any operator it found outside quotes. */
function cmdLine(
  line: string,
  env: Record<string, string>,
  dp0 = 'C:\\h\\bin\\',
  args = '',
): { words: string[]; operators: string[] } {
  // Phase 1, percent expansion (batch rules): %% is %, %name% its value or nothing, %~dp0 and %* given.
  let expanded = '';
  for (let i = 0; i < line.length; i++) {
    if (line[i] !== '%') {
      expanded += line[i];
      continue;
    }
    if (line[i + 1] === '%') {
      expanded += '%';
      i++;
    } else if (line.startsWith('%~dp0', i)) {
      expanded += dp0;
      i += 4;
    } else if (line[i + 1] === '*') {
      expanded += args;
      i++;
    } else {
      const end = line.indexOf('%', i + 1);
      if (end < 0) continue; // a lone % is dropped
      expanded += env[line.slice(i + 1, end).toUpperCase()] ?? '';
      i = end;
    }
  }
  // Phase 2: quotes toggle; outside them ^ takes the next character as it is, & | < > are operators.
  const words: string[] = [];
  const operators: string[] = [];
  let word = '';
  let quoted = false;
  for (let i = 0; i < expanded.length; i++) {
    const c = expanded[i];
    if (c === '"') {
      quoted = !quoted;
      word += c;
    } else if (quoted) word += c;
    else if (c === '^') word += expanded[++i] ?? '';
    else if ('&|<>'.includes(c)) operators.push(c);
    else if (c === ' ') {
      if (word) words.push(word);
      word = '';
    } else word += c;
  }
  if (word) words.push(word);
  return { words, operators };
}

/** A word's text once its quotes are taken off (how the program's C runtime reads it, for quote-free text). */
const unquote = (w: string) => w.replace(/"/g, '');

/** PowerShell reading a command line: `&`, then single-quoted literals ('' is one quote) and bare words. */
function psLine(line: string): { call: boolean; words: string[] } {
  const words: string[] = [];
  let i = 0;
  let call = false;
  const quotes = "'\u2018\u2019\u201a\u201b";
  while (i < line.length) {
    if (line[i] === ' ') i++;
    else if (line[i] === '&' && words.length === 0 && !call) {
      call = true;
      i++;
    } else if (quotes.includes(line[i])) {
      let w = '';
      i++;
      for (;;) {
        if (i >= line.length) throw new Error(`unterminated string in ${line}`);
        if (quotes.includes(line[i])) {
          if (i + 1 < line.length && quotes.includes(line[i + 1])) {
            w += line[i];
            i += 2;
            continue;
          }
          i++;
          break;
        }
        w += line[i++];
      }
      words.push(w);
    } else {
      let w = '';
      while (i < line.length && line[i] !== ' ') w += line[i++];
      words.push(w);
    }
  }
  return { call, words };
}

/** Hostile but legal Windows path pieces: spaces, &, %VAR%, ^, !, parentheses, an apostrophe, non-ASCII. */
const HOSTILE = [
  'C:\\Program Files (x86)\\R&D\\node.exe',
  'C:\\Tools\\100%PATH%\\node.exe',
  'C:\\Tools\\a^b!c\\node.exe',
  "C:\\Users\\O'Brien\\node.exe",
  'D:\\Éditeur\\東京\\node.exe',
];
const ENV = { PATH: 'C:\\Windows', USERPROFILE: 'C:\\Users\\Ana María' };

describe('the platform chooses the launchers and the shell', () => {
  it('Windows: .cmd launchers; hooks in PowerShell, but Claude Code runs them in Git Bash', () => {
    assert.equal(launcherKind('win32'), 'cmd');
    assert.equal(launcherKind('linux'), 'sh');
    assert.equal(launcherKind('darwin'), 'sh');
    for (const cli of ['codex', 'gemini', 'vscode']) assert.equal(hookShell('win32', cli), 'powershell');
    assert.equal(hookShell('win32', 'claude'), 'sh');
    assert.equal(hookShell('linux', 'codex'), 'sh');
  });
});

describe('cmd.exe: a value written into a .cmd line', () => {
  for (const path of HOSTILE)
    it(`${path}: reaches the program as it is`, () => {
      const line = `set ${batchQuoted(`NODE=${path}`)}`;
      const { words, operators } = cmdLine(line, ENV);
      assert.deepEqual(operators, []);
      assert.deepEqual(words.map(unquote), ['set', `NODE=${path}`]);
    });

  it("the POSIX launcher's quoting is no quoting to cmd.exe: & runs a second command, %PATH% expands", () => {
    assert.deepEqual(cmdLine(`set NODE=${shQuote(HOSTILE[0])}`, ENV).operators, ['&']);
    assert.equal(
      unquote(cmdLine(`set NODE=${shQuote(HOSTILE[1])}`, ENV).words[1]),
      "NODE='C:\\Tools\\100C:\\Windows\\node.exe'",
    );
    assert.equal(cmdLine(batchQuoted(HOSTILE[1]), ENV).words[0], `"${HOSTILE[1]}"`, 'doubled, the % stays');
  });

  it('a quote or a line break cannot be written into a .cmd line: refused, not mangled', () => {
    assert.throws(() => batchQuoted('C:\\a"b'), /holds a quote or a line break/);
    assert.throws(() => batchQuoted('C:\\a\r\nexit'), /holds a quote or a line break/);
  });

  it('an argument passed on with %* must hold none of cmd’s operators', () => {
    for (const ok of ['claude', 'Stop', '--workspace', 'C:\\My Repo (2)', 'bob!']) assert.equal(batchSafeArg(ok), ok);
    for (const bad of ['C:\\R&D', 'a|b', 'a^b', '100%', 'x>y', 'a"b'])
      assert.throws(() => batchSafeArg(bad), /cannot be passed through a Windows \.cmd launcher/);
  });
});

describe('the .cmd launchers', () => {
  const home = 'C:\\Users\\Ana María';
  const node = `${home}\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe`;

  it('run the build next to them with the Node they name, ELECTRON_RUN_AS_NODE for the editor’s binary', () => {
    const files = cmdLaunchers(node, true, home);
    assert.deepEqual(Object.keys(files).sort(), ['handoff-hook.cmd', 'handoff.cmd']);
    const hook = files['handoff-hook.cmd'];
    assert.ok(hook.endsWith('\r\n') && !/[^\r]\n/.test(hook), 'CRLF lines (cmd.exe misreads labels in LF files)');
    const lines = hook.split('\r\n');
    assert.equal(lines[0], '@echo off');
    const set = cmdLine(
      lines.find((l) => l.startsWith('set "NODE='))!,
      ENV,
    );
    assert.deepEqual(set.words.map(unquote), ['set', `NODE=${node}`]);
    assert.ok(lines.includes('set "ELECTRON_RUN_AS_NODE=1"'));
    const run = cmdLine(
      lines.find((l) => l.startsWith('"%NODE%"'))!,
      { ...ENV, NODE: node },
      'C:\\Users\\R&D\\bin\\',
      'codex Stop',
    );
    assert.deepEqual(run.operators, []);
    assert.deepEqual(run.words.map(unquote), [node, 'C:\\Users\\R&D\\bin\\..\\dist\\hook.js', 'codex', 'Stop']);
    assert.ok(!cmdLaunchers(node, false, home)['handoff.cmd'].includes('ELECTRON_RUN_AS_NODE'));
    assert.match(files['handoff.cmd'], /"%~dp0\.\.\\dist\\cli\.js" %\*/);
  });

  it("a Node under the profile is written through %USERPROFILE%: the user's name never goes through the code page", () => {
    const hook = cmdLaunchers(node, false, home)['handoff-hook.cmd'];
    assert.ok(hook.includes('set "NODE=%USERPROFILE%\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe"'));
    assert.ok(!/[^\x20-\x7e\r\n]/.test(hook), 'all ASCII');
    assert.ok(!hook.includes('chcp'));
    const elsewhere = cmdLaunchers('D:\\Éditeur\\node.exe', false, home)['handoff-hook.cmd'];
    assert.equal(elsewhere.split('\r\n')[1], 'chcp 65001 >nul', 'non-ASCII elsewhere: read as UTF-8');
    const hostile = cmdLaunchers(HOSTILE[1], false, home)['handoff-hook.cmd'];
    assert.ok(hostile.includes('set "NODE=C:\\Tools\\100%%PATH%%\\node.exe"'));
  });

  it('written on disk as .cmd files and a junction to the build, the Launch naming the hook launcher', () => {
    const dir = tempDir('cmd-launchers');
    const dist = tempDir('cmd-dist');
    const launch = refreshLaunchers(dir, node, dist, true, 'cmd', home);
    assert.equal(launch.node, node, 'the MCP server runs the .exe itself');
    assert.deepEqual(launch.env, { ELECTRON_RUN_AS_NODE: '1' });
    assert.equal(launch.hook, join(dir, 'bin', 'handoff-hook.cmd'));
    assert.equal(readFileSync(launch.hook!, 'utf8'), cmdLaunchers(node, true, home)['handoff-hook.cmd']);
    assert.equal(readlinkSync(join(dir, 'dist')), dist);
    const again = refreshLaunchers(dir, node, tempDir('cmd-dist-b'), true, 'cmd', home);
    assert.deepEqual(again, launch, 'an update: the same paths in agent configs');
  });
});

describe('PowerShell: a hook command for Codex, Gemini and VS Code', () => {
  it('single quotes, each one inside doubled (the typographic ones too), and & to call the program', () => {
    for (const s of ["O'Brien", 'a ‘b’ c', '$env:PATH `n "x"', 'R&D; rm -r C:\\', 'Ana María'])
      assert.deepEqual(psLine(psQuote(s)).words, [s]);
    const line = psCommand("C:\\Users\\O'Brien\\bin\\handoff-hook.cmd", ['codex', 'Stop']);
    assert.deepEqual(psLine(line), {
      call: true,
      words: ["C:\\Users\\O'Brien\\bin\\handoff-hook.cmd", 'codex', 'Stop'],
    });
  });

  it("the POSIX quoting fails there: '\\'' ends the string, and a quoted program alone is a string, not a call", () => {
    assert.notDeepEqual(psLine(shQuote("O'Brien")).words, ["O'Brien"]);
    const posix = [shQuote('C:\\Program Files\\h.cmd'), 'codex'].join(' ');
    assert.equal(psLine(posix).call, false);
  });
});

describe('connect on Windows (written for win32, on Linux)', () => {
  const home = 'C:\\Users\\Ana María';
  const workspace = 'C:\\src\\My Repo';
  const launch: Launch = {
    node: `${home}\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe`,
    dist: `${home}\\.local\\share\\handoff\\dist`,
    env: { ELECTRON_RUN_AS_NODE: '1' },
    hook: `${home}\\.local\\share\\handoff\\bin\\handoff-hook.cmd`,
  };
  const o = { workspace, home, launch, platform: 'win32' as const, repository: true };

  it('config files under %USERPROFILE% with backslashes; Claude Code keys the folder with forward slashes', () => {
    const claude = claudeFiles(o);
    assert.equal(claude.user, 'C:\\Users\\Ana María\\.claude.json');
    assert.equal(claude.settings, 'C:\\src\\My Repo\\.claude\\settings.local.json');
    assert.equal(claude.project, 'C:/src/My Repo');
    assert.equal(claudeFiles({ ...o, platform: 'linux' }).user, 'C:\\Users\\Ana María/.claude.json', 'the Linux join');
    assert.deepEqual(codexFiles(o), {
      config: 'C:\\Users\\Ana María\\.codex\\config.toml',
      hooks: 'C:\\Users\\Ana María\\.codex\\hooks.json',
    });
    assert.equal(geminiSettingsPath(o), 'C:\\Users\\Ana María\\.gemini\\settings.json');
  });

  it("Codex's trust names hooks.json as Codex does; a mixed-separator path would leave every hook untrusted", () => {
    const [trust] = codexHookTrust(codexFiles(o).hooks, {
      hooks: { Stop: [{ hooks: [{ command: `x ${'--from handoff-connect'}` }] }] },
    });
    assert.ok(trust.table.includes('C:\\\\Users\\\\Ana María\\\\.codex\\\\hooks.json:stop:0:0'), trust.table);
  });

  it('each CLI gets a command its shell runs: Git Bash for Claude Code, PowerShell for Codex and Gemini', () => {
    const claude = JSON.parse(
      connectClaude({ ...o, repository: false }).find((c) => c.path.endsWith('settings.local.json'))!.after,
    );
    const claudeHook: string = claude.hooks.Stop[0].hooks[0].command;
    assert.equal(
      claudeHook,
      `'${launch.hook}' claude Stop --workspace 'C:\\src\\My Repo' --from handoff-connect`,
      'POSIX words in Git Bash, the .cmd launcher named',
    );
    const codex = JSON.parse(connectCodex(o).find((c) => c.path.endsWith('hooks.json'))!.after);
    const codexHook: string = codex.hooks.Stop[0].hooks[0].command;
    assert.ok(isOurHook(codexHook));
    assert.deepEqual(psLine(codexHook.slice(0, -' --from handoff-connect'.length)), {
      call: true,
      words: [launch.hook, 'codex', 'Stop'],
    });
    const gemini = JSON.parse(connectGemini(o).find((c) => c.path.endsWith('settings.json'))!.after);
    assert.equal(
      gemini.hooks.AfterAgent[0].hooks[0].command,
      `& '${launch.hook}' 'gemini' 'AfterAgent' --from handoff-connect`,
    );
    assert.deepEqual(
      gemini.mcpServers.handoff.command,
      launch.node,
      'the MCP server: the .exe, spawned without a shell',
    );
    assert.equal(gemini.mcpServers.handoff.args[0], `${launch.dist}\\bridge.js`);
  });

  it('a pinned folder cmd.exe would split is refused with the reason, before any file is written', () => {
    assert.throws(
      () => hookCommand(launch, { cli: 'claude', workspace: 'C:\\src\\R&D' }, 'Stop', 'win32'),
      /"C:\\src\\R&D" cannot be passed through a Windows \.cmd launcher/,
    );
  });
});

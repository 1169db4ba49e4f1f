// Tests wait for what they wait on (test/helpers/wait.ts), never for a guessed time: a sleep that
// stands in for an event passes on a quiet machine and fails on a loaded one. A pause that is the
// scenario itself (a sender's pace, a deadline raced against an exit, proving an absence) says so
// with `// sleep: <why>` on its line or the line above. A timer whose handle is kept is a deadline
// to be cleared, not a pause.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/hubProcess';

const SOURCE = /\.(ts|mts|mjs|js)$/;
const PAUSE = /\bsetTimeout\(|(?<![\w.])sleep\(/;

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* files(path);
    else if (SOURCE.test(e.name) && !e.name.endsWith('.d.mts')) yield path;
  }
}

/** Lines of `text` that pause on a timer without saying why. */
export function unmarkedPauses(text: string): number[] {
  const lines = text.split('\n');
  const found: number[] = [];
  lines.forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, '');
    if (/\bconst sleep\b|function sleep\b|import .*sleep/.test(code)) return; // its definition
    // A handle kept and cleared is a deadline; one only kept is a pause with a name.
    const kept = /([\w.]+)\s*=\s*setTimeout\(/.exec(code)?.[1];
    if (kept && text.includes(`clearTimeout(${kept}`)) return;
    if (!PAUSE.test(code)) return;
    if (line.includes('// sleep:') || (i > 0 && lines[i - 1].includes('// sleep:'))) return;
    found.push(i + 1);
  });
  return found;
}

describe('tests wait for events, not for time', () => {
  it('finds a pause and accepts a marked one or a deadline', () => {
    assert.deepEqual(unmarkedPauses('await new Promise((r) => setTimeout(r, 300));'), [1]);
    assert.deepEqual(unmarkedPauses('await sleep(2000);'), [1]);
    assert.deepEqual(unmarkedPauses('setTimeout(() => {\n  s.destroy();\n}, 20);'), [1]);
    assert.deepEqual(unmarkedPauses('await sleep(5); // sleep: a sender pace'), []);
    assert.deepEqual(unmarkedPauses('// sleep: the scenario\nawait sleep(1500);'), []);
    assert.deepEqual(unmarkedPauses('const timer = setTimeout(() => child.kill(), 5000);\nclearTimeout(timer);'), []);
    assert.deepEqual(unmarkedPauses('timer = setTimeout(() => resolve("timeout"), ms);\nclearTimeout(timer);'), []);
    assert.deepEqual(unmarkedPauses('const pause = setTimeout(go, 300);'), [1], 'a pause under a name');
  });

  it('no test file pauses on a timer without saying why', () => {
    const offenders: string[] = [];
    for (const path of files(join(ROOT, 'test'))) {
      if (path.endsWith('noSleeps.test.ts')) continue; // its samples above are strings
      for (const line of unmarkedPauses(readFileSync(path, 'utf8'))) offenders.push(`${relative(ROOT, path)}:${line}`);
    }
    assert.deepEqual(offenders, [], 'mark a pause that is the scenario with // sleep: <why>, or wait for the event');
  });
});

// Every import in extension/ goes one way: no file reaches itself through its imports, type-only
// ones included (a circle of types is still two files that cannot be read, or moved, apart).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { ROOT } from '../helpers/hubProcess';

type Graph = Map<string, string[]>;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

function importsOf(file: string, text: string): string[] {
  return ts
    .preProcessFile(text, true, false)
    .importedFiles.map((f) => f.fileName)
    .filter((s) => s.startsWith('.'))
    .map((s) => resolve(dirname(file), s))
    .map((p) => [`${p}.ts`, join(p, 'index.ts')].find((c) => existsSync(c)))
    .filter((p): p is string => p !== undefined);
}

/** Each circle once, as the files on it (Tarjan's strongly connected components of more than one file). */
export function circles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        part.push(w);
        if (w === v) break;
      }
      if (part.length > 1 || graph.get(v)?.includes(v)) found.push(part.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('imports go one way', () => {
  it('finds a circle of two and of three, and none in a line', () => {
    assert.deepEqual(
      circles(
        new Map([
          ['a', ['b']],
          ['b', ['a']],
        ]),
      ),
      [['a', 'b']],
    );
    assert.deepEqual(
      circles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
      [['a', 'b', 'c']],
    );
    assert.deepEqual(
      circles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
      [],
    );
  });

  it('no file of extension/ reaches itself through its imports', () => {
    const dir = join(ROOT, 'extension');
    const graph: Graph = new Map(sources(dir).map((f) => [f, importsOf(f, readFileSync(f, 'utf8'))]));
    assert.ok(graph.size > 200, `read the sources (${graph.size} files)`);
    const found = circles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(' ↔ '));
    assert.deepEqual(found, [], `import circles:\n${found.join('\n')}`);
  });
});

// What goes into the .vsix: `vsce ls` with the package script's options lists nothing but what the
// extension needs (an allow-list), and every picture the extension's page links is in the package
// where the page looks: the package's README sits at its root, so a link resolves from there.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/hubProcess';

const NEEDED = [
  /^package\.json$/,
  /^LICENSE$/,
  /^CHANGELOG\.md$/,
  /^docs\/marketplace\.md$/, // the package's README
  /^docs\/images\/[\w-]+\.png$/, // only those the README links: checked below
  /^media\/handoff\.(png|svg)$/,
  /^media\/walkthrough\/\w+\.md$/,
  /^dist\/(extension|hubClient|hub|matrix|bridge|cli|hook)\.js$/,
  /^dist\/media\/(panel\.(js|css)|elements\.js|codicon\.(css|ttf))$/,
  /^dist\/pkg\/matrix_sdk_crypto_wasm_bg\.wasm$/,
];

describe('the .vsix', () => {
  it('holds nothing but what the extension needs, and every picture its page links', () => {
    const listed = execFileSync(
      join(ROOT, 'node_modules', '.bin', 'vsce'),
      ['ls', '--no-dependencies', '--readme-path', 'docs/marketplace.md'],
      { cwd: ROOT, encoding: 'utf8' },
    )
      .split('\n')
      .filter(Boolean);
    assert.deepEqual(
      listed.filter((f) => !NEEDED.some((re) => re.test(f))),
      [],
      'files the extension does not need',
    );
    const page = readFileSync(join(ROOT, 'docs', 'marketplace.md'), 'utf8');
    const linked = [...page.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]);
    assert.ok(linked.length > 0);
    assert.deepEqual(
      linked.filter((l) => !listed.includes(l)),
      [],
      'pictures the page links that are not in the package at that path',
    );
    assert.deepEqual(
      listed.filter((f) => f.startsWith('docs/images/') && !linked.includes(f)),
      [],
      'pictures in the package that the page does not show',
    );
  });
});

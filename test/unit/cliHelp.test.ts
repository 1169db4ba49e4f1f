// `--help` after any command prints the usage and exits 0, instead of "Unknown option" (and a hub
// started by `handoff hub --help`); after `--` it is part of a body, not a question.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DIST, NODE } from '../helpers/hubProcess';
import { tempDir } from '../helpers/tempDir';

const cli = (args: string[]) =>
  spawnSync(NODE, [join(DIST, 'cli.js'), ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    // No hub anywhere: a command that ran instead of answering --help would fail to find one.
    env: { ...process.env, HANDOFF_HUB: join(tempDir('cli-help'), 'none.sock') },
  });

describe('handoff <command> --help', () => {
  for (const args of [
    ['export', '--help'],
    ['store', 'retention', '--help'],
    ['search', 'parser', '-h'],
    ['send', '--to', 'bob', '--help'],
    ['hub', '--help'],
  ]) {
    it(`handoff ${args.join(' ')} prints the usage and exits 0`, () => {
      const r = cli(args);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^usage: handoff <command>/);
    });
  }

  it('after -- it is a body, not a question', () => {
    const r = cli(['send', '--to', 'bob', '--', '--help']);
    assert.doesNotMatch(r.stdout, /usage: handoff/);
    assert.notEqual(r.status, 0, 'no hub: the send itself ran, and failed');
  });
});

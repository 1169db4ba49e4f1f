// The CLI a new user meets, through the real binary (dist/cli.js) and a real hub: every mistake is
// a sentence that says what to do, never a Node stack trace, and its exit code is the documented
// one (docs/cli.md: 0 done, 1 ran and failed or found something, 2 not run). An export of ACKed
// but unfinished handoffs says why it wrote none and points to --open, and leaves no empty file
// for the next run to trip on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { DIST, NODE, startHub, tempDir, type HubProcess } from '../helpers/hubProcess';

const cli = (args: string[], hub = join(tempDir('cli-errors-nohub'), 'none.sock')) =>
  spawnSync(NODE, [join(DIST, 'cli.js'), ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, HANDOFF_HUB: hub },
  });

/** No stack trace, no Node error code: a sentence. */
function sentence(stderr: string): void {
  assert.doesNotMatch(stderr, /\n\s+at |ERR_[A-Z_]+|TypeError|EEXIST:/, stderr);
}

describe('the CLI says what went wrong and what to do', { timeout: 120_000 }, () => {
  for (const [args, said] of [
    [['peers', '--jsn'], /handoff peers has no option --jsn — did you mean --json\?/],
    [['send', '--sla', '60', '--to', 'bob', 'hi'], /handoff send has no option --sla\. It takes .*--to/],
    [['sned', '--to', 'bob', 'hi'], /"sned" is not a command — did you mean `handoff send`\?/],
    [['send', '--to'], /--to needs a value/],
    [['send', 'hello'], /handoff send needs --to NAME and a body/],
    [
      ['store', 'retention', '--days', '0'],
      /--days 0: give a whole number of days from 1 to 36 500\. Nothing was changed/,
    ],
    [['store', 'chek'], /did you mean `handoff store check`\?/],
    [['connect', 'clade'], /did you mean claude\?/],
    [['search', '--limit', 'lots'], /--limit lots is not a count from 1 to 500/],
    [['search', 'state:late'], /state:late is not a state/],
    [['export', '--since', 'yesterday'], /--since "yesterday" is neither a date .* nor a duration/],
  ] as const)
    it(`handoff ${args.join(' ')}: exit 2 and one sentence`, () => {
      const r = cli([...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, said);
      assert.equal(r.stdout, '');
      sentence(r.stderr);
    });

  it('--version prints the package version and exits 0', () => {
    const r = cli(['--version']);
    assert.equal(r.status, 0, r.stderr);
    const { version } = JSON.parse(readFileSync(join(DIST, '..', 'package.json'), 'utf8')) as { version: string };
    assert.equal(r.stdout, `handoff ${version} (Node ${process.version})\n`);
  });

  it('no hub: exit 2, naming how to start one', () => {
    const r = cli(['peers']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /no hub for the workspace .*Start one with `handoff hub --workspace DIR`/);
  });

  it('store check says a file not yet written is no damage', () => {
    const r = cli(['store', 'check', '--store', join(tempDir('cli-errors-store'), 'store')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /state\.json: not there yet, which is no damage \(the hub writes it at its first checkpoint/,
    );
    assert.doesNotMatch(r.stdout, /: none$/m);
  });
});

describe('handoff export of handoffs ACKed but not finished', { timeout: 120_000 }, () => {
  let hub: HubProcess;
  before(async () => {
    const store = join(tempDir('cli-errors-export'), 'store');
    const filling = new Hub({ workspace: tempDir('cli-errors-ws'), storeDir: store, node: 'n' });
    await filling.start();
    for (const who of ['alice', 'bob']) await filling.remember(who);
    for (let i = 1; i <= 4; i++) {
      const r = await filling.send({ identity: 'alice', session: 'a', node: 'n' }, { to: ['bob'], body: `task ${i}` });
      await filling.receipt({ identity: 'bob', session: 'b', node: 'n' }, r.message_id, 'ack');
    }
    await filling.close();
    hub = await startHub({ store });
  });
  after(async () => hub?.stop());

  it('says none settled, that 4 open ones were left out, and to add --open; no empty file is left', () => {
    const out = join(tempDir('cli-errors-out'), 'x.ndjson');
    const r = cli(['export', '--since', '30d', '--out', out], hub.socket);
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /no handoff settled in that time \(no file made\); 4 open one\(s\) .* were left out .*Add --open/,
    );
    assert.equal(existsSync(out), false, 'no empty file for the rerun to trip on');
    const again = cli(['export', '--since', '30d', '--open', '--out', out], hub.socket);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(readFileSync(out, 'utf8').trim().split('\n').length, 4);
    assert.match(again.stderr, /4 handoff\(s\) written to/);
  });

  it('an existing --out file is refused in a sentence, exit 2, untouched', () => {
    const out = join(tempDir('cli-errors-exists'), 'kept.ndjson');
    writeFileSync(out, 'mine\n');
    const r = cli(['export', '--since', '30d', '--out', out], hub.socket);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /kept\.ndjson exists already, and an export never overwrites a file: give another --out/);
    sentence(r.stderr);
    assert.equal(readFileSync(out, 'utf8'), 'mine\n');
  });
});

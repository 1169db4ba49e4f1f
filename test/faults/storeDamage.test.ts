// Damage is never silent: a bad line in the middle of the archive, a journal or the checkpoint stops
// the real hub from opening its store, with the file and the byte offset named, and the file left
// byte for byte as it was; a torn last line is still cut; `handoff store repair` says what it would
// drop, and with --yes keeps a copy and drops only that.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import type { Message } from '../../extension/hub/bus/model';
import { Store } from '../../extension/hub/store/store';
import { DIST, NODE, startHub, tempDir } from '../helpers/hubProcess';
import { doneReceipt, storedMessage } from '../helpers/storedMessage';

const run = promisify(execFile);
const opts = { idempotencyWindowMs: 60_000 };

const message = (i: number) => storedMessage(i, { body: `message ${i} `.padEnd(400, '.') });

const done = (m: Message) => doneReceipt(m);

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Where line `i` (0-based) of the file starts. */
function lineAt(path: string, i: number): number {
  const buf = readFileSync(path);
  let at = 0;
  for (let n = 0; n < i; n++) at = buf.indexOf(0x0a, at) + 1;
  return at;
}

function overwrite(path: string, at: number, bytes: string): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from(bytes), 0, undefined, at);
  closeSync(fd);
}

/** A store of `settled` archived handoffs and `open` open ones; `close`: false leaves the open ones in the journal (kill -9). */
async function makeStore(settled: number, open: number, close: boolean): Promise<string> {
  const dir = join(tempDir('damage'), 'store');
  const store = await Store.open(dir, 'n', opts);
  const ms = Array.from({ length: settled }, (_, i) => message(i + 1));
  for (let i = 0; i < ms.length; i += 200)
    await Promise.all(ms.slice(i, i + 200).map((m) => store.commit([{ type: 'sent', message: m }, done(m)])));
  if (settled > 0) await store.close();
  const again = settled > 0 ? await Store.open(dir, 'n', opts) : store;
  await Promise.all(
    Array.from({ length: open }, (_, i) => again.commit([{ type: 'sent', message: message(100_000 + i) }])),
  );
  if (close) await again.close();
  return dir;
}

async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(NODE, [join(DIST, 'cli.js'), ...args]);
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout + err.stderr };
  }
}

/** The real hub on the store: it serves, refuses the store, says why in its log and in `status`. */
async function refused(dir: string, file: string, offset: number): Promise<void> {
  const hub = await startHub({ store: dir });
  try {
    const said = new RegExp(`${file.replace(/\./g, '\\.')} is damaged at byte ${offset} `);
    assert.match(hub.log(), said, hub.log());
    assert.match(hub.log(), /handoff store check --store/);
    const status = await cli('status', '--hub', hub.socket);
    assert.equal(status.code, 1, status.out);
    assert.match(status.out, /store FAILING: .* is damaged at byte/);
    assert.match(status.out, said);
  } finally {
    await hub.stop();
  }
}

describe('a damaged store', { timeout: 120_000 }, () => {
  it('17 bytes overwritten in line 1 001 of a 2 000-line history segment: refused, the file unchanged; repair drops that line only', async () => {
    const dir = await makeStore(2000, 0, true);
    const archive = join(dir, 'history', '000001.ndjson');
    const at = lineAt(archive, 1000);
    overwrite(archive, at + 200, 'XXXXXXXXXXXXXXXXX'); // inside the body: the line still parses
    const before = sha(archive);
    await refused(dir, archive, at);
    assert.equal(sha(archive), before, 'the archive is byte for byte as it was');

    const check = await cli('store', 'check', '--store', dir);
    assert.equal(check.code, 1);
    assert.match(check.out, new RegExp(`000001\\.ndjson: DAMAGED at byte ${at}: its checksum does not match`));
    assert.match(check.out, /repair would drop 1 line\(s\), keeping the 999 good record\(s\) after the first/);
    const asked = await cli('store', 'repair', '--store', dir);
    assert.equal(asked.code, 1);
    assert.match(asked.out, /Nothing was changed/);
    assert.equal(sha(archive), before, 'repair without --yes changes nothing');
    const repaired = await cli('store', 'repair', '--store', dir, '--yes');
    assert.equal(repaired.code, 0, repaired.out);
    const copy = readdirSync(join(dir, 'history')).find((f) => f.startsWith('000001.ndjson.damaged-'));
    assert.ok(copy, repaired.out);
    assert.equal(sha(join(dir, 'history', copy)), before, 'the damaged file is kept beside it as it was');

    const store = await Store.open(dir, 'n', opts);
    assert.equal(store.archivedCount, 1999, 'only the damaged line was dropped');
    assert.equal(await store.isArchived(message(1001).id), false);
    assert.equal((await store.archived(message(1002).id))?.message.body, message(1002).body);
    await store.close();
    assert.equal((await cli('store', 'check', '--store', dir)).code, 0);
  });

  it('record 505 of 606 in the journal after a kill -9: refused, the file unchanged', async () => {
    const dir = await makeStore(0, 606, false);
    const journal = join(dir, 'journal.ndjson');
    const at = lineAt(journal, 504);
    overwrite(journal, at + 100, 'XXXXXXXXXXXXXXXXX');
    const before = sha(journal);
    await refused(dir, journal, at);
    assert.equal(sha(journal), before);
    const check = await cli('store', 'check', '--store', dir);
    assert.match(check.out, /repair would drop 1 line\(s\), keeping the 101 good record\(s\) after the first/);
  });

  it('a line of the checkpoint that no longer parses: refused, naming its offset; damage inside a body is caught by the checksum', async () => {
    const dir = await makeStore(0, 50, true);
    const doc = join(dir, 'state.json');
    assert.ok(existsSync(`${doc}.index`), 'a start from the open index, which parses no line');
    const at = lineAt(doc, 25);
    overwrite(doc, at, 'XXXXXXXXXXXXXXXXX'); // the line's key
    const before = sha(doc);
    await refused(dir, doc, at);
    assert.equal(sha(doc), before);

    const inBody = await makeStore(0, 50, true);
    const doc2 = join(inBody, 'state.json');
    overwrite(doc2, lineAt(doc2, 25) + 200, 'XXXXXXXXXXXXXXXXX'); // still parses
    const before2 = sha(doc2);
    await refused(inBody, doc2, 0);
    assert.equal(sha(doc2), before2);
  });

  it('a torn last line is still cut, and the hub opens the store', async () => {
    const dir = await makeStore(20, 0, true);
    const archive = join(dir, 'history', '000001.ndjson');
    const whole = readFileSync(archive).length;
    overwrite(archive, whole, '{"crc32":"00000000","synced":0,"message":{"id":"01J'); // no end: a write cut short
    const hub = await startHub({ store: dir });
    try {
      assert.match(hub.log(), new RegExp(`000001\\.ndjson: a torn tail cut at byte ${whole}`));
      assert.match(hub.log(), /0 open, 20 archived/);
    } finally {
      await hub.stop();
    }
    assert.equal(readFileSync(archive).length, whole);
  });
});

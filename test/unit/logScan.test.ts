// The log reader at small chunk sizes (every line boundary falls on a chunk boundary somewhere), and
// the line that tells a torn write from damage: zeros or no end, and no later line marked past it.
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AppendLog } from '../../extension/hub/store/appendLog';
import { frameLine } from '../../extension/hub/store/logLine';
import { scanLog, type LoadedLine } from '../../extension/hub/store/logScan';
import { nodeFs } from '../../extension/hub/store/storeFs';
import { tempDir } from '../helpers/hubProcess';

const line = (n: number, synced = 0, pad = n * 7) =>
  `${frameLine(JSON.stringify({ n, pad: 'x'.repeat(pad) }), synced)}\n`;

async function scan(content: string | Buffer, chunk?: number, maxLine?: number) {
  const path = join(tempDir('logscan'), 'log.ndjson');
  writeFileSync(path, content);
  const fh = await nodeFs.open(path, 'read');
  const records: LoadedLine<{ n: number }>[] = [];
  try {
    const result = await scanLog(
      path,
      fh,
      (v: { n: number }) => v,
      (l) => records.push(l),
      { chunk, maxLine },
    );
    return { ...result, records };
  } finally {
    await fh.close();
  }
}

describe('reading a log', () => {
  it('gives every record at its offset whatever the chunk size, holding no line past its limit', async () => {
    const text = Array.from({ length: 40 }, (_, i) => line(i)).join('');
    for (const chunk of [1, 2, 3, 7, 16, 64, 1000, 1 << 20]) {
      const { records, good, damage, torn } = await scan(text, chunk);
      assert.equal(damage, undefined);
      assert.equal(torn, undefined);
      assert.equal(good, Buffer.byteLength(text));
      assert.deepEqual(
        records.map((r) => r.value.n),
        Array.from({ length: 40 }, (_, i) => i),
      );
      for (const r of records)
        assert.equal(text.slice(r.offset, r.offset + r.length + 1), line(r.value.n), `chunk ${chunk}`);
    }
    // Zeros written ahead, longer than any line is held: the end, read in chunks, not held.
    const zeros = await scan(Buffer.concat([Buffer.from(text), Buffer.alloc(5000)]), 64, 1024);
    assert.equal(zeros.records.length, 40);
    assert.equal(zeros.torn, undefined);
    // A line past the limit is not held: a bad line, reported by its place.
    const long = await scan(`${line(0)}${line(1, 0, 3000)}${line(2)}`, 64, 1024);
    assert.equal(long.damage?.offset, Buffer.byteLength(line(0)));
    assert.match(long.damage!.why, /too long/);
  });

  it('a write cut short with a later batch written after it, marked before it was synced: a torn tail', async () => {
    const good = line(1) + line(2);
    const at = Buffer.byteLength(good);
    const cut = Buffer.concat([Buffer.from(line(3).slice(0, 20)), Buffer.alloc(30)]); // the rest never landed
    const later = line(4, at); // synced up to the cut, not past it
    const { torn, damage, records } = await scan(Buffer.concat([Buffer.from(good), cut, Buffer.from(later)]));
    assert.equal(damage, undefined);
    assert.deepEqual(torn, { records: 0 }); // the later line is part of the cut line
    assert.equal(records.length, 2);
    const two = await scan(Buffer.concat([Buffer.from(good), cut, Buffer.from(later + line(5, at))]));
    assert.deepEqual(two.torn, { records: 1 });
  });

  it('a bad line with a later line marked past it, one with no zeros and an end, or one followed by unmarked lines: damage', async () => {
    const good = line(1) + line(2);
    const at = Buffer.byteLength(good);
    const cut = Buffer.concat([Buffer.from(line(3).slice(0, 20)), Buffer.alloc(30), Buffer.from('\n')]);
    const proven = await scan(Buffer.concat([Buffer.from(good), cut, Buffer.from(line(4, at + 1))]));
    assert.equal(proven.damage?.offset, at);
    assert.match(proven.damage!.why, /shows it had been synced whole/);
    assert.equal(proven.damage?.laterRecords, 1);

    const flipped = line(3).replace('xxx', 'xyx'); // parses, checksum does not match
    const last = await scan(good + flipped);
    assert.equal(last.damage?.offset, at, 'the last line, whole and without zeros: not a torn write');
    assert.match(last.damage!.why, /checksum/);

    const legacy = `${JSON.stringify({ n: 4 })}\n`;
    const unmarked = await scan(Buffer.concat([Buffer.from(good), cut, Buffer.from(legacy)]));
    assert.match(unmarked.damage!.why, /earlier version/);

    const later = await scan(`${good}{"crc32":"zz","synced":0,"n":3}\n`);
    assert.match(later.damage!.why, /later version/);
  });

  it('a synced line zeroed later (a sector lost) is damage: the lines written after it carry the proof', async () => {
    const path = join(tempDir('logscan-zeroed'), 'log.ndjson');
    const log = new AppendLog<{ n: number }>(path, (v) => v);
    await log.open(() => undefined);
    const places = [];
    for (let n = 1; n <= 3; n++) places.push(...(await log.writeBatch([{ n }])));
    await log.close();
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(10), 0, 10, places[0].offset + 20);
    closeSync(fd);
    const before = readFileSync(path);
    const again = new AppendLog<{ n: number }>(path, (v) => v);
    await assert.rejects(
      again.open(() => undefined),
      { name: 'StoreDamage', message: /log\.ndjson is damaged at byte 0 / },
    );
    assert.deepEqual(readFileSync(path), before, 'nothing cut');
  });

  it('lines an earlier version wrote, without checksum or mark, are read as they were', async () => {
    const text = `${JSON.stringify({ n: 1 })}\n${JSON.stringify({ n: 2 })}\n${line(3)}`;
    const { records, damage } = await scan(text, 5);
    assert.equal(damage, undefined);
    assert.deepEqual(
      records.map((r) => r.value.n),
      [1, 2, 3],
    );
  });
});

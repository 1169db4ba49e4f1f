// An archive past 4 GiB, of real archived handoffs (64 KiB bodies, the largest a send takes), each
// line as the store writes it: the real hub starts on it and answers, and the last handoff, past
// byte 2³², reads back. It is the archive an earlier version wrote: indexed in place at the first open. A log of 2 GiB or more, read with one `read`, made Node abort at every start.
// Not sparse: a hole is no line the store writes, so the file is written whole (skipped without
// 10 GiB free), and removed after.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Message } from '../../extension/hub/bus/model';
import { frameLine } from '../../extension/hub/store/logLine';
import { Store } from '../../extension/hub/store/store';
import { DIST, NODE, startHub, tempDir } from '../helpers/hubProcess';

const TARGET = 4 * 2 ** 30 + 64 * 2 ** 20;
const free = (() => {
  const s = statfsSync(tempDir('big-free'));
  return s.bavail * s.bsize;
})();

describe('an archive past 4 GiB', { skip: free < 10 * 2 ** 30 && 'less than 10 GiB free' }, () => {
  it('the real hub starts on it and answers; the handoff past byte 2^32 reads back', { timeout: 600_000 }, async () => {
    const dir = join(tempDir('big'), 'store');
    try {
      // One settled handoff, archived by the store itself: the template of every line.
      const store = await Store.open(dir, 'n', { idempotencyWindowMs: 60_000 });
      const m: Message = {
        id: '01JD3V7W2K8Q5X9Y4Z00000000',
        seq: 1,
        from: 'alice',
        address: ['bob'],
        recipients: ['bob'],
        thread: 't',
        body: 'b',
        attachments: [],
        requiresAck: true,
        slaMs: 60_000,
        ttlMs: 3_600_000,
        sentAt: Date.now(),
        sentBySession: 's',
        node: 'n',
      };
      await store.commit([{ type: 'sent', message: m }]);
      const at = Date.now();
      await store.commit([
        {
          type: 'receipt',
          id: m.id,
          recipient: 'bob',
          receipt: { kind: 'result', outcome: 'done', by: 'bob', session: 's', node: 'n', at },
        },
      ]);
      await store.close();
      // The archive an earlier version wrote, one file that only grew: indexed in place at the first start.
      const segment = join(dir, 'history', '000001.ndjson');
      const template = JSON.parse(readFileSync(segment, 'utf8').split('\n')[0]) as Record<string, unknown>;
      rmSync(join(dir, 'history'), { recursive: true });
      const archive = join(dir, 'archive.ndjson');
      delete template.crc32;
      delete template.synced;
      const body = 'h'.repeat(64 * 1024 - 16);
      const fd = openSync(archive, 'w');
      let size = 0;
      let n = 0;
      let lastAt = 0;
      let pending: string[] = [];
      let pendingBytes = 0;
      const flush = () => {
        const buf = Buffer.from(pending.join(''));
        writeSync(fd, buf, 0, buf.length, size - buf.length);
        pending = [];
        pendingBytes = 0;
      };
      const id = (i: number) => `01JD3V7W2K8Q5X9Y4Z${String(i).padStart(8, '0')}`;
      while (size < TARGET) {
        n++;
        const record = { ...template, message: { ...(template.message as object), id: id(n), body: `${n} ${body}` } };
        const text = `${frameLine(JSON.stringify(record), size)}\n`;
        lastAt = size;
        size += Buffer.byteLength(text);
        pending.push(text);
        pendingBytes += text.length;
        if (pendingBytes > 64 * 2 ** 20) flush();
      }
      flush();
      closeSync(fd);
      assert.ok(lastAt > 2 ** 32, `the last line starts at ${lastAt}`);

      let t = performance.now();
      const migrated = await Store.open(dir, 'n', { idempotencyWindowMs: 60_000 });
      assert.equal(migrated.archivedCount, n);
      await migrated.close();
      const migrateMs = Math.round(performance.now() - t);
      const started = performance.now();
      const hub = await startHub({ store: dir });
      const startMs = Math.round(performance.now() - started);
      try {
        const rss = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(hub.proc.pid)]).toString()) * 1024;
        assert.match(hub.log(), new RegExp(`0 open, ${n} archived`), hub.log());
        const status = execFileSync(NODE, [join(DIST, 'cli.js'), 'status', '--hub', hub.socket]).toString();
        assert.match(status, /store ok/);
        console.log(
          `# archive of ${(size / 2 ** 30).toFixed(2)} GiB, ${n} handoffs: indexed in place at the first open in ${migrateMs} ms; then the real hub listening after ${startMs} ms, RSS ${Math.round(rss / 2 ** 20)} MiB`,
        );
      } finally {
        await hub.stop();
      }
      const again = await Store.open(dir, 'n', { idempotencyWindowMs: 60_000 });
      t = performance.now();
      const last = await again.archived(id(n));
      console.log(`# the handoff past byte 2^32 read back by id in ${(performance.now() - t).toFixed(2)} ms`);
      assert.equal(last?.message.body, `${n} ${body}`);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

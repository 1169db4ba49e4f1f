// An attachment is the open file's hash and size (hub/serve/mcp/attachments.ts): a regular file
// inside the workspace; a FIFO is refused without waiting for a writer.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveAttachment } from '../../extension/hub/serve/mcp/attachments';
import { tempDir } from '../helpers/hubProcess';

describe('an attachment', () => {
  const ws = tempDir('attach');
  it('is the hash and size of the file opened', async () => {
    writeFileSync(join(ws, 'notes.txt'), 'hello');
    const a = await resolveAttachment(ws, 'notes.txt');
    assert.deepEqual(a, {
      path: 'notes.txt',
      sha256: createHash('sha256').update('hello').digest('hex'),
      bytes: 5,
    });
  });

  it('a FIFO is refused at once, and a path outside the workspace too', async () => {
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    await assert.rejects(resolveAttachment(ws, 'pipe'), /not a regular file/);
    await assert.rejects(resolveAttachment(ws, '../'), /outside the workspace/);
  });
});

// Quiet marks (shared/quiet.ts): the hub removes an identity's mark in the commit that gives it a
// handoff — already gone when the send's promise resolves, in process, with no round trip to
// hide a late removal — and a hook trusts only a regular file of ours naming a live process.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { isQuiet, quietDir, quietMarkPath } from '../../extension/shared/quiet';
import { tempDir } from '../helpers/hubProcess';

const alice = { identity: 'alice', session: 'a-1', node: 'n' };

describe('quiet marks', () => {
  it('the mark is gone when the send that gives the identity a handoff resolves, and back when that handoff is done', async () => {
    const socket = join(tempDir('quiet-sock'), 'hub.sock');
    const hub = new Hub({
      workspace: tempDir('quiet-ws'),
      storeDir: tempDir('quiet-store'),
      node: 'n',
      tickMs: 0,
      socket,
    });
    await hub.start();
    try {
      await hub.remember('bob');
      hub.answeredQuiet('bob');
      const mark = quietMarkPath(socket, 'bob');
      assert.ok(isQuiet(socket, 'bob'), 'marked: nothing waits for bob');
      const sent = await hub.send(alice, { to: ['bob'], body: 'take the release branch' });
      assert.equal(existsSync(mark), false, 'removed in the commit, before the send resolved');
      assert.equal(isQuiet(socket, 'bob'), false);
      await hub.receipt({ identity: 'bob', session: 'b-1', node: 'n' }, sent.message_id, 'result', 'done', 'taken');
      assert.ok(isQuiet(socket, 'bob'), 'nothing waits again: marked in that commit');
    } finally {
      await hub.close();
    }
    assert.equal(existsSync(quietDir(socket)), false, 'a stopping hub removes its marks');
  });

  it('a hook trusts only a private regular file of ours naming a live process, for a valid local name', () => {
    const socket = join(tempDir('quiet-trust'), 'hub.sock');
    mkdirSync(quietDir(socket), { mode: 0o700 });
    const mark = (name: string, content: string, mode = 0o600) => {
      writeFileSync(quietMarkPath(socket, name), content, { mode });
      chmodSync(quietMarkPath(socket, name), mode);
    };
    mark('live', String(process.pid));
    assert.equal(isQuiet(socket, 'live'), true);
    mark('dead', '999999999');
    assert.equal(isQuiet(socket, 'dead'), false, 'no such process');
    mark('voided', '0');
    assert.equal(isQuiet(socket, 'voided'), false, 'a voided mark');
    mark('open', String(process.pid), 0o666);
    assert.equal(isQuiet(socket, 'open'), false, 'others may write it');
    symlinkSync(quietMarkPath(socket, 'live'), quietMarkPath(socket, 'linked'));
    assert.equal(isQuiet(socket, 'linked'), false, 'a symlink is not followed');
    assert.equal(isQuiet(socket, '../quiet-trust'), false, 'not an identity name');
    assert.equal(isQuiet(socket, 'bob@remote'), false, 'a remote identity has no mark here');
  });
});

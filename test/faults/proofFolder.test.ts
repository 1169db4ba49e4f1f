// A runtime folder where the hub cannot create its process challenge (full, read-only, or not a
// folder at all): each hook and bridge asking to prove its process is refused with the reason, and
// the hub serves on; once the folder is back, bridges prove themselves again. Linux only.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { canProve } from '../../extension/hub/serve/processProof';
import { connectControl } from '../../extension/shared/controlClient';
import { connectAgent } from '../helpers/agent';
import { startHub, type HubProcess } from '../helpers/hubProcess';
import { rawHook } from '../helpers/rawHook';

/** The hub's reply to one hello line, and whether it closed the connection after it. */
function helloReply(socket: string, hello: object): Promise<{ reply: any; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const s = createConnection(socket, () => s.write(`${JSON.stringify({ handoff: 1, ...hello })}\n`));
    let buf = '';
    s.on('data', (d: Buffer) => (buf += d.toString()));
    s.on('error', reject);
    s.on('close', () => resolve({ reply: JSON.parse(buf.split('\n')[0]), closed: true }));
  });
}

describe('a runtime folder where no challenge can be created', { skip: !canProve && 'no /proc' }, () => {
  let hub: HubProcess;
  let proofDir: string;
  before(async () => {
    hub = await startHub();
    proofDir = `${hub.socket}.proof`;
    // A file where the folder was: creating a challenge fails (ENOTDIR), as on a full tmpfs, and
    // for root too, whom no mode bit stops.
    rmSync(proofDir, { recursive: true, force: true });
    writeFileSync(proofDir, '');
  });
  after(() => hub?.stop());

  it('a bridge that offers a proof is refused with the reason; the hub stays up', async () => {
    const { reply, closed } = await helloReply(hub.socket, { kind: 'mcp', identity: 'alice', proves: true });
    assert.equal(reply.ok, false, JSON.stringify(reply));
    assert.match(reply.error, /the hub cannot create its process challenge in .*\.proof: ENOTDIR/);
    assert.ok(closed);
    assert.equal(hub.proc.exitCode, null, `the hub is up:\n${hub.log()}`);
    assert.match(hub.log(), /bridge for alice refused: the hub cannot create its process challenge/);
  });

  it('the next clients are answered: a hook is refused with the reason, a control client served', async () => {
    const hook = await rawHook(hub.socket, {
      cli: 'claude',
      phase: 'tool',
      event: 'PostToolUse',
      identity: 'alice',
      session: 's',
      ancestors: [],
    });
    assert.match(hook.error ?? '', /ENOTDIR/, JSON.stringify(hook));
    const control = await connectControl(hub.socket, 'after-the-refusal');
    control.close();
    assert.equal(hub.proc.exitCode, null, `the hub is up:\n${hub.log()}`);
  });

  it('once the folder is back, a real bridge proves its process and is served', async () => {
    rmSync(proofDir);
    const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    try {
      assert.equal((await alice.ok('whoami')).identity, 'alice');
    } finally {
      await alice.close();
    }
  });
});

// The hub's process proof (hub/serve/processProof.ts) against a peer that lies about which process
// it is, with the hub's own challenge().answer() over a real unix socket. Linux only.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { canProve, challenge, type Proof } from '../../extension/hub/serve/processProof';
import { tempDir } from '../helpers/hubProcess';

/** A process of its own holding `path` open on fd 3, once it has said its pid. */
function holder(path: string): Promise<{ pid: number; child: ChildProcess }> {
  const child = spawn('sh', ['-c', 'exec 3<"$1"; echo $$; exec sleep 30', 'sh', path], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return new Promise((resolve) => {
    child.stdout!.once('data', (d: Buffer) => resolve({ pid: Number(d.toString().trim()), child }));
  });
}

/** The hub's side of one connection answers `c`; the peer's side writes `line`. */
function answerOver(dir: string, c: ReturnType<typeof challenge>, line: string): Promise<Proof> {
  const path = join(dir, `s-${Math.random().toString(36).slice(2)}.sock`);
  return new Promise((resolve) => {
    const server = createServer((hubSide: Socket) => {
      void c.answer(hubSide).then((p) => {
        hubSide.destroy();
        peer.destroy();
        server.close();
        resolve(p);
      });
    });
    let peer: Socket;
    server.listen(path, () => {
      peer = createConnection(path, () => peer.write(`${line}\n`));
    });
  });
}

const why = (p: Proof) => ('refused' in p ? p.refused.message : `proven: ${JSON.stringify(p.ancestors)}`);

describe('the process proof', { skip: !canProve && 'no /proc' }, () => {
  const dir = tempDir('proof');
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) c.kill();
  });

  it("a peer that holds the hub's file is proven, itself first", async () => {
    const c = challenge(dir, 'hook');
    const { pid, child } = await holder(c.path);
    children.push(child);
    const p = await answerOver(dir, c, JSON.stringify({ pid }));
    assert.ok(!('refused' in p), why(p));
    assert.equal(p.ancestors[0], pid);
    assert.equal(p.ancestors[1], process.pid, 'its parent read from /proc');
  });

  it("a rename of another process's open file onto the challenge path does not pass as that process", async () => {
    // The victim holds a file of its own; the attacker moves that file's name onto the challenge.
    const victimFile = join(dir, 'victim-log');
    writeFileSync(victimFile, '');
    const c = challenge(dir, 'hook');
    const victim = await holder(victimFile);
    children.push(victim.child);
    renameSync(victimFile, c.path);
    const p = await answerOver(dir, c, JSON.stringify({ pid: victim.pid }));
    assert.match(why(p), new RegExp(`process ${victim.pid} does not hold the challenge file open`));
  });

  it("the hub's own pid, or one of its threads', is not a peer: the hub holds the file itself", async () => {
    const thread = readdirSync('/proc/self/task')
      .map(Number)
      .find((t) => t !== process.pid);
    for (const pid of [process.pid, ...(thread ? [thread] : [])]) {
      const c = challenge(dir, 'bridge');
      const p = await answerOver(dir, c, JSON.stringify({ pid }));
      assert.match(why(p), /does not hold the challenge file open/, `pid ${pid}`);
    }
  });

  it('the challenge file is gone once answered', async () => {
    const c = challenge(dir, 'hook');
    await answerOver(dir, c, 'not json');
    assert.ok(!readdirSync(dir).includes(c.path.slice(dir.length + 1)));
  });
});

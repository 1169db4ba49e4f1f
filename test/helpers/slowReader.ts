// A reader that stops reading (#44): a real bridge whose client process is SIGSTOPped (as ^Z does)
// while handoffs arrive for it, then let go on. Counted: what reached the client (live, replayed),
// what the hub still holds open for it, and the hub's and the bridge's memory meanwhile.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIST, NODE, ROOT, startHub } from './hubProcess';
import { rawAgent } from './rawAgent';
import { sendMany } from './sendMany';
import { waitFor } from './wait';

export interface SlowReaderRun {
  sent: number;
  /** Pushes that reached the client, by kind. */
  live: number;
  replayed: number;
  /** Sent, and neither pushed to the client nor open in its inbox. */
  lost: number;
  /** Pushed to the client as new more than once. */
  liveTwice: number;
  /** Replay notices ("N more unacked handoffs were not pushed"). */
  notices: number;
  /** The hub closed the connection for not reading, this many times. */
  cutOff: number;
  /** What its queue held when it was closed first. */
  queuedAtCutKiB: number;
  hubRssStartMb: number;
  hubRssPeakMb: number;
  bridgeRssPeakMb: number;
  /** Body bytes carried to the stopped reader. */
  carriedMb: number;
}

const rssMb = (pid: number) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return 0; // it exited meanwhile
  }
};

interface Client {
  proc: ChildProcess;
  bridgePid: number;
  pushes: { push: string; replayed: boolean }[];
  notices: string[];
  request(method: string, params: unknown): Promise<any>;
  stderr: () => string;
}

async function client(socket: string, name: string): Promise<Client> {
  const proc = spawn(NODE, [join(ROOT, 'test/helpers/stdioClient.mjs'), join(DIST, 'bridge.js'), '--name', name], {
    env: { ...process.env, HANDOFF_HUB: socket },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const c: Client = { proc, bridgePid: 0, pushes: [], notices: [], request: undefined!, stderr: () => '' };
  const answers = new Map<number, any>();
  let seq = 0;
  c.request = async (method, params) => {
    const id = ++seq;
    proc.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    await waitFor(() => answers.has(id), 30_000, `the answer to ${method}`);
    return answers.get(id);
  };
  let text = '';
  let ready = false;
  proc.stdout!.on('data', (d: Buffer) => {
    text += d.toString();
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
      const o = JSON.parse(text.slice(0, nl));
      text = text.slice(nl + 1);
      if (o.ready) [ready, c.bridgePid] = [true, o.bridgePid];
      else if (o.push) c.pushes.push(o);
      else if (o.notice) c.notices.push(o.notice);
      else if (o.response) answers.set(o.response.id, o.response);
    }
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  c.stderr = () => err;
  await waitFor(() => ready, 30_000, `${name}'s client to be initialised`);
  return c;
}

export async function slowReader(n: number, bodyBytes: number): Promise<SlowReaderRun> {
  const hub = await startHub();
  const hubPid = hub.proc.pid!;
  const bob = await client(hub.socket, 'bob');
  const alice = await rawAgent(hub.socket, { identity: 'alice' });
  await alice.initialize();
  const hubRssStartMb = rssMb(hubPid);
  let hubRssPeakMb = hubRssStartMb;
  let bridgeRssPeakMb = 0;
  const sample = setInterval(() => {
    hubRssPeakMb = Math.max(hubRssPeakMb, rssMb(hubPid));
    bridgeRssPeakMb = Math.max(bridgeRssPeakMb, rssMb(bob.bridgePid));
  }, 50);
  const cutOff = () => hub.log().split('past its bound').length - 1;
  try {
    bob.proc.kill('SIGSTOP');
    const ids = await sendMany(alice, 'bob', n, bodyBytes);
    await waitFor(
      () => cutOff() > 0,
      60_000,
      () => `the hub to close the connection that stopped reading:\n${hub.log().slice(-1500)}`,
    );
    bob.proc.kill('SIGCONT');
    // Back: the bridge drains what it holds, reconnects, and the hub replays (first what it never
    // pushed, then what it had, flagged replayed), bounded, with a notice of how many more wait.
    await waitFor(
      () => bob.notices.length > 0 || bob.pushes.some((p) => p.replayed),
      60_000,
      () => `a replay (${bob.pushes.length} pushes so far)\n${hub.log().slice(-2000)}\n${bob.stderr()}`,
    );
    const open = new Set<string>();
    for (let after: number | undefined = 0; after !== undefined;) {
      const r = await bob.request('tools/call', { name: 'inbox', arguments: { limit: 200, after_seq: after } });
      for (const m of r.result.structuredContent.messages as { message_id: string }[]) open.add(m.message_id);
      after = r.result.structuredContent.next_after_seq;
    }
    const got = new Set(bob.pushes.map((p) => p.push));
    const liveCount = new Map<string, number>();
    for (const p of bob.pushes) if (!p.replayed) liveCount.set(p.push, (liveCount.get(p.push) ?? 0) + 1);
    return {
      sent: ids.length,
      live: bob.pushes.filter((p) => !p.replayed).length,
      replayed: bob.pushes.filter((p) => p.replayed).length,
      lost: ids.filter((id) => !got.has(id) && !open.has(id)).length,
      liveTwice: [...liveCount.values()].filter((k) => k > 1).length,
      notices: bob.notices.length,
      cutOff: cutOff(),
      queuedAtCutKiB: Number(/stopped reading: (\d+) KiB/.exec(hub.log())?.[1]),
      hubRssStartMb,
      hubRssPeakMb,
      bridgeRssPeakMb,
      carriedMb: (n * bodyBytes) / 1024 / 1024,
    };
  } finally {
    clearInterval(sample);
    bob.proc.kill('SIGCONT');
    bob.proc.stdin!.end();
    alice.close();
    await hub.stop();
  }
}

// A hook exchange written by hand on the hub socket, as a forger (or a test) would: the hello, the
// hub's reply, its challenge (Linux: open this file, say your pid), then the answer line. Who
// answers the challenge is the test's choice, so each way of lying about a hook's process is tried.
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { createConnection } from 'node:net';

/**
 * 'self': this process opens the file and says its pid (an honest client). `{ pid }`: says another
 * process's pid without that process opening anything. 'detached': a process outside every
 * agent's tree (`setsid -f`, reparented to init) holds the file open, and its pid is said.
 * 'silent': never answers.
 */
export type Prover = 'self' | { pid: number } | 'detached' | 'silent';

/**
 * A shell in a session of its own that opens `path` on fd 3, prints its pid and sleeps holding it
 * (stdin would not do: Node closes a child's stdin when it exits, and `setsid` exits at once).
 * Ready once `setsid` itself has exited: until then the shell is still its child, in our tree.
 */
function detachedHolder(path: string): Promise<{ pid: number; release(): void }> {
  const child = spawn('setsid', ['-f', 'sh', '-c', 'exec 3<"$1"; echo $$; exec sleep 20', 'sh', path], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<void>((resolve, reject) => {
    child.once('exit', () => resolve());
    child.once('error', reject);
  });
  const printed = new Promise<number>((resolve) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!out.includes('\n')) return;
      child.stdout.destroy();
      resolve(Number(out.trim()));
    });
  });
  return Promise.all([printed, exited]).then(([pid]) => ({ pid, release: () => process.kill(pid) }));
}

/**
 * Sends `hello` and resolves with the hub's last line (the answer, or `{ error }`); `cut` closes
 * the connection with the answer in hand (a hook killed before it printed), else it confirms.
 */
export function rawHook(
  socket: string,
  hello: Record<string, unknown>,
  prover: Prover = 'self',
  then: 'ack' | 'cut' = 'ack',
): Promise<any> {
  return new Promise((resolve, reject) => {
    const s = createConnection(socket);
    let buf = '';
    let seen = 0;
    const release: (() => void)[] = [];
    const finish = (value: unknown) => {
      for (const r of release.splice(0)) r();
      resolve(value);
    };
    s.on('connect', () => s.write(`${JSON.stringify({ handoff: 1, kind: 'hook', ...hello })}\n`));
    const onData = async (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n').slice(0, -1);
      for (; seen < lines.length; seen++) {
        if (seen === 0) continue; // the hello reply
        const msg = JSON.parse(lines[seen]);
        if (typeof msg.challenge === 'string') {
          if (prover === 'silent') continue;
          let pid: number;
          if (prover === 'self') {
            openSync(msg.challenge, 'r'); // held until this process exits
            pid = process.pid;
          } else if (prover === 'detached') {
            const holder = await detachedHolder(msg.challenge);
            release.push(holder.release);
            pid = holder.pid;
          } else pid = prover.pid;
          s.write(`${JSON.stringify({ pid })}\n`);
          continue;
        }
        if (then === 'cut') s.destroy();
        else s.end('ack\n');
        return finish(msg);
      }
    };
    s.on('data', (d: Buffer) => void onData(d).catch(reject));
    s.on('close', () => finish({ error: 'closed without an answer' }));
    s.on('error', reject);
  });
}

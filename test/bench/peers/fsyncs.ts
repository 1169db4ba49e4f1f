// fsyncs per send, counted the same way for every bus: strace attached to the server process
// (all its threads and any child it starts, e.g. git) counts fsync, fdatasync and
// sync_file_range calls while one sender sends `n` messages one after another.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../helpers/hubProcess';

const SYNCS = ['fsync', 'fdatasync', 'sync_file_range'];

export async function fsyncsPerSend(pid: number, n: number, send: (i: number) => Promise<void>): Promise<number> {
  const out = join(tempDir('strace'), 'summary.txt');
  const strace = spawn('strace', ['-f', '-c', '-e', `trace=${SYNCS.join(',')}`, '-o', out, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  strace.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => strace.once('exit', () => r()));
  const start = Date.now();
  while (!err.includes('attached')) {
    if (strace.exitCode !== null || Date.now() - start > 10_000)
      throw new Error(`strace did not attach to ${pid}: ${err}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  for (let i = 0; i < n; i++) await send(i);
  strace.kill('SIGINT');
  await exited;
  // The -c table: "% time  seconds  usecs/call  calls  errors syscall"; errors may be blank.
  let calls = 0;
  for (const line of readFileSync(out, 'utf8').split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (SYNCS.includes(cols[cols.length - 1])) calls += Number(cols[3]);
  }
  return calls / n;
}

// fsyncs per send, counted the same way for every bus: strace attached to the server process
// (all its threads and any child it starts, e.g. git) counts fsync, fdatasync and
// sync_file_range calls while one sender sends `n` messages one after another.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../helpers/hubProcess';
import { waitFor } from '../../helpers/wait';

const SYNCS = ['fsync', 'fdatasync', 'sync_file_range'];

export async function fsyncsPerSend(pid: number, n: number, send: (i: number) => Promise<void>): Promise<number> {
  const out = join(tempDir('strace'), 'summary.txt');
  const strace = spawn('strace', ['-f', '-c', '-e', `trace=${SYNCS.join(',')}`, '-o', out, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  strace.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => strace.once('exit', () => r()));
  await waitFor(
    () => {
      if (strace.exitCode !== null) throw new Error(`strace exited before it attached to ${pid}: ${err}`);
      return err.includes('attached');
    },
    10_000,
    () => `strace to attach to ${pid}: ${err}`,
  );
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

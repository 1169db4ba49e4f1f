// A process known by its pid and start time (shared/proc.ts): what a wake checks before it types
// into an agent's terminal, so a pid that has exited, or been given to another process, is not it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { markProcess, procStat, stillRuns } from '../../extension/shared/proc';

describe('a marked process', { skip: !procStat(process.pid) && 'no /proc' }, () => {
  it('runs while it runs; once exited it does not', async () => {
    const child = spawn('sleep', ['600'], { stdio: 'ignore' });
    const mark = markProcess(child.pid!);
    assert.ok(mark.start, 'its start time read');
    assert.ok(stillRuns(mark));
    const exited = new Promise((r) => child.once('exit', r));
    child.kill();
    await exited;
    assert.equal(stillRuns(mark), false);
  });

  it('a pid that another process holds now (another start time) is not it', () => {
    assert.ok(stillRuns(markProcess(process.pid)));
    assert.equal(stillRuns({ pid: process.pid, start: '1' }), false);
  });
});

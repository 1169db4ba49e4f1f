// Temp folders for tests and benches (handoff-<prefix>-XXXXXX in the system temp folder). Each is
// removed when the process that made it exits, unless a test failed (exit code not 0) or
// HANDOFF_KEEP_TEMP is set: then they are kept, and named, to look into. With HANDOFF_TEMP_LEDGER
// (npm test sets it) each is also listed in that file, for the check after the run (tempLeft.mjs).
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { killStrays } from './strays.mjs';

const made: string[] = [];

function removeMade(code: number): void {
  if (code !== 0 || process.env.HANDOFF_KEEP_TEMP) {
    process.stderr.write(
      `kept ${made.length} temp folder(s) (${code !== 0 ? `exit ${code}` : 'HANDOFF_KEEP_TEMP'}): ${made.join(' ')}\n`,
    );
    return;
  }
  // What still runs from these folders (a CLI's daemon, a pane's last writes) would make them again.
  killStrays(...made);
  for (const dir of made) {
    try {
      // Retried: a hub or CLI this process started may still be writing there as it goes.
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    } catch (e) {
      process.stderr.write(`could not remove ${dir}: ${(e as Error).message}\n`);
    }
  }
}

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `handoff-${prefix}-`));
  // A worker thread's folders are its parent's to remove: its exit is not the test's end.
  if (made.length === 0 && isMainThread) process.on('exit', removeMade);
  made.push(dir);
  if (process.env.HANDOFF_TEMP_LEDGER) appendFileSync(process.env.HANDOFF_TEMP_LEDGER, `${dir}\n`);
  return dir;
}

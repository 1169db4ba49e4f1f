// The hub's side of the quiet marks (shared/quiet.ts): a mark per local identity with nothing
// waiting, removed synchronously in the commit that gives it a handoff — before that send is
// acknowledged or pushed — and put back once nothing waits again. Writes only on a change.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { quietMarkPath, quietDir } from '../shared/quiet';
import { IDENTITY_PATTERN } from '../protocol/names';
import type { Log } from '../protocol/hubLog';

export class QuietMarks {
  private readonly marked = new Set<string>();
  private broken = false;

  /** Clears what a hub before this one left (it may have crashed with marks now wrong). */
  constructor(
    private readonly socket: string,
    private readonly log: Log,
  ) {
    rmSync(quietDir(socket), { recursive: true, force: true });
    mkdirSync(quietDir(socket), { mode: 0o700 });
  }

  /** The identity's state now: marked if nothing waits, unmarked if something does. */
  update(identity: string, waiting: boolean): void {
    if (this.broken || identity.includes('@') || !IDENTITY_PATTERN.test(identity)) return;
    if (waiting === !this.marked.has(identity)) return;
    const path = quietMarkPath(this.socket, identity);
    try {
      if (waiting) {
        this.marked.delete(identity);
        rmSync(path, { force: true });
      } else {
        writeFileSync(path, String(process.pid), { mode: 0o600 });
        this.marked.add(identity);
      }
    } catch (e) {
      // A mark that cannot be removed would hide handoffs from that identity's tool-call hooks: stop using them.
      this.broken = true;
      this.log(`quiet marks off (${(e as Error).message}): every hook asks the hub`, 'warn');
      this.close();
    }
  }

  close(): void {
    this.marked.clear();
    try {
      rmSync(quietDir(this.socket), { recursive: true, force: true });
    } catch {
      // the dir is in the runtime dir; a leftover is cleared by the next hub, and names a dead pid
    }
  }
}

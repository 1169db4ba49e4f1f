// The hub's side of the quiet marks (shared/quiet.ts): a mark per local identity with nothing
// waiting, removed synchronously in the commit that gives it a handoff — before that send is
// acknowledged or pushed — and put back once nothing waits again. Writes only on a change.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { markable, quietMarkPath, quietDir } from '../../shared/quiet';
import type { Log } from '../../protocol/hubLog';

export class QuietMarks {
  private readonly marked = new Set<string>();
  private off = false;

  /** Clears what a hub before this one left (it may have crashed with marks now wrong). */
  constructor(
    private readonly socket: string,
    private readonly log: Log,
  ) {
    rmSync(quietDir(socket), { recursive: true, force: true });
    mkdirSync(quietDir(socket), { mode: 0o700 }); // fails if someone made it again meanwhile
  }

  /** The identity's state now: marked if nothing waits, unmarked if something does. */
  update(identity: string, waiting: boolean): void {
    if (this.off || !markable(identity)) return;
    if (waiting === !this.marked.has(identity)) return;
    const path = quietMarkPath(this.socket, identity);
    try {
      if (waiting) {
        rmSync(path, { force: true });
        this.marked.delete(identity); // only once gone: a mark that stays is voided by close()
      } else {
        writeFileSync(path, String(process.pid), { mode: 0o600 });
        this.marked.add(identity);
      }
    } catch (e) {
      // A mark left in place would keep that identity's tool-call hooks from asking: void every
      // one (a pid of 0 is no hub's), then stop keeping them; every hook asks.
      this.log(`quiet marks off (${(e as Error).message}): every hook asks the hub`, 'error');
      this.close();
    }
  }

  /** Removes the marks; none is kept from here on. */
  close(): void {
    if (this.off) return;
    this.off = true;
    for (const identity of this.marked) {
      try {
        writeFileSync(quietMarkPath(this.socket, identity), '0');
      } catch {
        // removed below, or the folder is gone
      }
    }
    this.marked.clear();
    try {
      rmSync(quietDir(this.socket), { recursive: true, force: true });
    } catch (e) {
      this.log(`could not remove ${quietDir(this.socket)}: ${(e as Error).message}`, 'error');
    }
  }
}

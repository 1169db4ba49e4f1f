// Encrypted room events this hub could not take yet — their room key has not come, or the device
// that sent them has not been vouched for yet — kept on disk (written before the sync that
// carried them commits its position) and tried again after each sync. Taking one twice is
// harmless: handoffs and receipts are idempotent. The list in memory changes only once the file
// holds it: a failed write leaves the events not kept, so the retried sync keeps them again.
import { replaceDurably } from '../store/replaceDurably';
import { nodeFs, writeAll, type StoreFs } from '../store/storeFs';
import type { RawEvent } from './wire';

/** An event not taken after this long is given up (counted). */
const KEPT_MS = 24 * 3600_000;
const KEPT_MAX = 10_000;

interface Kept {
  event: RawEvent;
  since: number;
}

export class KeptEvents {
  private kept: Kept[] = [];
  private ids = new Set<string>();
  /** Given up so far (this run). */
  givenUp = 0;

  private constructor(
    private readonly path: string,
    private readonly fs: StoreFs,
  ) {}

  static async open(path: string, fs: StoreFs = nodeFs): Promise<KeptEvents> {
    const k = new KeptEvents(path, fs);
    try {
      const parsed = JSON.parse((await fs.readFile(path)).toString('utf8')) as unknown;
      if (Array.isArray(parsed))
        k.kept = (parsed as Kept[]).filter(
          (x) => typeof x?.event?.event_id === 'string' && typeof x.since === 'number',
        );
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    k.ids = new Set(k.kept.map((x) => x.event.event_id));
    return k;
  }

  get size(): number {
    return this.kept.length;
  }

  has(eventId: string): boolean {
    return this.ids.has(eventId);
  }

  /** The events to try again, oldest first; those past their time (or over the cap) are returned as given up. */
  due(now = Date.now()): { events: RawEvent[]; givenUp: RawEvent[] } {
    const over = this.kept.length - KEPT_MAX;
    const givenUp = this.kept.filter((x, i) => x.since < now - KEPT_MS || i < over);
    if (givenUp.length) this.forget(new Set(givenUp.map((x) => x.event.event_id)));
    this.givenUp += givenUp.length;
    return { events: this.kept.map((x) => x.event), givenUp: givenUp.map((x) => x.event) };
  }

  /** Keeps new events and writes the list; called before the sync that carried them commits. */
  async keep(events: RawEvent[], now = Date.now()): Promise<void> {
    const fresh = events.filter((e) => !this.ids.has(e.event_id));
    if (fresh.length === 0) return;
    const kept = [...this.kept, ...fresh.map((event) => ({ event, since: now }))];
    await this.write(kept);
    this.kept = kept;
    for (const event of fresh) this.ids.add(event.event_id);
  }

  /** Forgets events that were taken or dropped (after their commit). */
  async done(ids: ReadonlySet<string>): Promise<void> {
    if (![...ids].some((id) => this.ids.has(id))) return;
    await this.write(this.kept.filter((x) => !ids.has(x.event.event_id)));
    this.forget(ids);
  }

  private forget(ids: ReadonlySet<string>): void {
    this.kept = this.kept.filter((x) => !ids.has(x.event.event_id));
    for (const id of ids) this.ids.delete(id);
  }

  private async write(kept: Kept[]): Promise<void> {
    const bytes = Buffer.from(JSON.stringify(kept));
    await replaceDurably(this.fs, this.path, async (file) => {
      await writeAll(file, bytes, 0);
      return bytes.length;
    });
  }
}

// Retention: what the user chose to keep of history (keep N days and/or N GiB; by default
// everything). Whole sealed segments go, oldest first — never the segment being written, never part
// of one. Only settled handoffs are ever written to history (store.ts archiveSettled takes
// isSettled ones), so nothing open, pending, stuck, failed or escalated-and-unanswered is in what goes.
//
// A drop is made durable in an order a crash cannot break: first an intent (dropped.json, replaced
// durably) naming the files and adding the segments to the count of what retention removed; then
// the files are unlinked; then the intent is cleared (its folder's fsync makes the unlinks durable). A start that finds
// an intent finishes it before it reads anything (finishDrop), so no index is ever left pointing at
// a missing segment, nor a segment without its index.
import { join } from 'node:path';
import { retentionPolicy, type RetentionPolicy } from '../../protocol/controlSchemas';
import type { RetentionView } from '../../protocol/views';
import type { History, Sealed } from './history';
import { LEGACY, readDropRecord, readJson, removeFiles, writeJson, type DropRecord } from './dropRecord';
import { indexSize, segmentFile } from './segmentIndex';
import type { StoreFs } from './storeFs';

const DAY = 86_400_000;
const GIB = 2 ** 30;
/** The policy file (retention.json in the store folder): what the user set, or why it is not read. */
export async function readPolicy(fs: StoreFs, storeDir: string): Promise<RetentionPolicy | { invalid: string }> {
  const path = join(storeDir, 'retention.json');
  const raw = await readJson(fs, path);
  if (raw === undefined) return {};
  const r = retentionPolicy.safeParse(raw);
  if (r.success) return r.data;
  const why = r.error.issues.map((i) => `${i.path.join('.') || 'the file'} ${i.message}`).join('; ');
  return {
    invalid: `${path} is not a retention setting (${why}): history is kept whole until it is set again with \`handoff store retention\``,
  };
}

/** Segments that go and come back only together: one each, or every legacy index with the archive they share. */
interface Unit {
  segments: Sealed[];
  names: string[];
  bytes: number;
  handoffs: number;
  /** When its newest handoff was settled; 0: not known (never dropped by age). */
  newestAt: number;
}

function unitsOf(sealed: readonly Sealed[]): Unit[] {
  const units: Unit[] = [];
  const legacy = sealed.filter((s) => s.header.legacy);
  if (legacy.length > 0)
    units.push({
      segments: legacy,
      names: [...legacy.map((s) => segmentFile(s.n, 'idx')), LEGACY],
      bytes: Math.max(...legacy.map((s) => s.header.to)) + legacy.reduce((n, s) => n + indexSize(s.header), 0),
      handoffs: legacy.reduce((n, s) => n + s.header.count, 0),
      newestAt: legacy.some((s) => s.header.lastAt === 0) ? 0 : Math.max(...legacy.map((s) => s.header.lastAt)),
    });
  for (const s of sealed)
    if (!s.header.legacy)
      units.push({
        segments: [s],
        names: [segmentFile(s.n, 'idx'), segmentFile(s.n, 'ndjson')],
        bytes: s.header.to + indexSize(s.header),
        handoffs: s.header.count,
        newestAt: s.header.lastAt,
      });
  return units;
}

/**
 * The units to drop, oldest first: while the oldest is older than the days kept, or history is
 * larger than the bytes kept. The first one kept stops it: history has no holes.
 */
export function toDrop(sealed: readonly Sealed[], activeBytes: number, policy: RetentionPolicy, now: number): Unit[] {
  const units = unitsOf(sealed);
  let total = units.reduce((n, u) => n + u.bytes, activeBytes);
  const out: Unit[] = [];
  for (const u of units) {
    const old = policy.keepDays !== undefined && u.newestAt > 0 && u.newestAt < now - policy.keepDays * DAY;
    const over = policy.keepGiB !== undefined && total > policy.keepGiB * GIB;
    if (!old && !over) break;
    out.push(u);
    total -= u.bytes;
  }
  return out;
}

export interface RetentionOptions {
  fs: StoreFs;
  storeDir: string;
  now: () => number;
  log: (line: string, level?: 'warn' | 'error') => void;
}

/** The store's retention: its policy, what it removed, and the runs (one at a time). */
export class Retention {
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly history: History,
    private readonly options: RetentionOptions,
    public policy: RetentionPolicy,
    public dropped: DropRecord,
  ) {}

  static async open(history: History, options: RetentionOptions): Promise<Retention> {
    const policy = await readPolicy(options.fs, options.storeDir);
    if ('invalid' in policy) options.log(policy.invalid, 'error');
    const dropped = await readDropRecord(options.fs, history.dir);
    return new Retention(history, options, 'invalid' in policy ? {} : policy, dropped);
  }

  /** Sets the policy (durably, in retention.json), then runs it. */
  async set(policy: RetentionPolicy): Promise<void> {
    await writeJson(this.options.fs, join(this.options.storeDir, 'retention.json'), policy);
    this.policy = policy;
    await this.run();
  }

  /** Drops what the policy no longer keeps; runs after the one before. */
  run(): Promise<void> {
    const next = this.running.then(() => this.dropNow());
    this.running = next.catch((e: Error) => this.options.log(`history: retention failed: ${e.message}`, 'error'));
    return next;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }

  private async dropNow(): Promise<void> {
    if (this.closed) return;
    const units = toDrop(this.history.segments, this.history.activeBytes, this.policy, this.options.now());
    if (units.length === 0) return;
    const { fs } = this.options;
    const names = units.flatMap((u) => u.names);
    const settledBefore = Math.max(this.dropped.settledBefore, ...units.map((u) => u.newestAt));
    const record: DropRecord = {
      segments: this.dropped.segments + units.reduce((n, u) => n + u.segments.length, 0),
      handoffs: this.dropped.handoffs + units.reduce((n, u) => n + u.handoffs, 0),
      settledBefore,
      removing: names,
    };
    const path = join(this.history.dir, 'dropped.json');
    await writeJson(fs, path, record); // the intent: from here on the drop is finished, now or at the next start
    await this.history.forgetOldest(units.reduce((n, u) => n + u.segments.length, 0));
    this.dropped = record;
    await removeFiles(fs, this.history.dir, join(this.options.storeDir, 'archive.ndjson'), names);
    this.dropped = { ...record, removing: [] };
    await writeJson(fs, path, this.dropped);
    for (const u of units)
      for (const s of u.segments)
        this.options.log(
          `history: dropped segment ${s.n} (${s.header.count} handoffs, settled before ${u.newestAt ? new Date(u.newestAt).toISOString() : 'an unknown time'})`,
        );
  }

  view(): RetentionView {
    const h = this.history;
    const sealed = h.segments;
    return {
      policy: this.policy,
      dropped: {
        segments: this.dropped.segments,
        handoffs: this.dropped.handoffs,
        settledBefore: this.dropped.settledBefore,
      },
      history: {
        segments: sealed.length + 1,
        bytes: unitsOf(sealed).reduce((n, u) => n + u.bytes, h.activeBytes),
        handoffs: h.count,
      },
    };
  }

  /** Whether retention may have removed this id: it was made (its ULID's time) before the newest settlement dropped. */
  mayHaveDropped(id: string): boolean {
    if (this.dropped.segments === 0) return false;
    const made = ulidTime(id);
    return made === undefined || made <= this.dropped.settledBefore || this.dropped.settledBefore === 0;
  }
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The ms a ULID was made at, or undefined if it is not one. */
function ulidTime(id: string): number | undefined {
  if (!/^[0-9A-HJKMNP-TV-Z]{26}$/i.test(id)) return undefined;
  let t = 0;
  for (const c of id.slice(0, 10).toUpperCase()) t = t * 32 + CROCKFORD.indexOf(c);
  return t;
}

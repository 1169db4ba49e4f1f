// `handoff store retention [--days N] [--gib N] [--keep-all]`: how much history this repository's
// store keeps. The setting lives in the store (retention.json), so the hub keeps it whoever started
// it — an editor window or `handoff hub`; it is set through the running hub, which writes it durably
// and drops at once what it no longer keeps.
import { call, RetentionRequest } from '../protocol/control';
import { retentionPolicy, type RetentionPolicy } from '../protocol/controlSchemas';
import type { RetentionView } from '../protocol/views';
import { connectHub } from './hubConnection';
import { readFlags, UsageError } from './arguments';

/** What each limit takes, said when a value is out of it (zod's "Too small: expected number to be >=1" was). */
const RANGE: Record<string, (v: string | undefined) => string> = {
  keepDays: (v) => `--days ${v}: give a whole number of days from 1 to 36 500`,
  keepGiB: (v) => `--gib ${v}: give a size in GiB above 0 (a fraction is fine), up to 1 048 576`,
};

/** A flag's number, or why it is not one ("30d", "", "1e999" are not). */
function number(flag: string, v: string): number {
  const n = /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new Error(`${flag} "${v}" is not a number: give one such as ${flag} 30`);
  return n;
}

function describe(r: RetentionView): string {
  const keep = [
    r.policy.keepDays !== undefined ? `${r.policy.keepDays} day(s) after settling` : '',
    r.policy.keepGiB !== undefined ? `at most ${r.policy.keepGiB} GiB` : '',
  ].filter(Boolean);
  const mib = (r.history.bytes / 2 ** 20).toFixed(1);
  return [
    `keeps: ${keep.length > 0 ? keep.join(' and ') : 'everything'} (open, pending, stuck, failed and escalated handoffs are never dropped)`,
    `history: ${r.history.handoffs} settled handoff(s) in ${r.history.segments} segment(s), ${mib} MiB`,
    r.dropped.segments > 0
      ? `dropped so far: ${r.dropped.handoffs} handoff(s) in ${r.dropped.segments} segment(s), all settled before ${new Date(r.dropped.settledBefore).toISOString()}`
      : 'dropped so far: nothing',
  ].join('\n');
}

const OPTIONS = {
  days: { type: 'string' },
  gib: { type: 'string' },
  'keep-all': { type: 'boolean' },
  hub: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export async function retentionCommand(argv: string[]): Promise<number> {
  let values: ReturnType<typeof readFlags<typeof OPTIONS>>['values'];
  let change: RetentionPolicy | undefined;
  try {
    values = readFlags('handoff store retention', argv, OPTIONS).values;
    if (values['keep-all'] && (values.days !== undefined || values.gib !== undefined))
      throw new Error('--keep-all keeps everything: give it alone, or --days/--gib without it');
    if (values['keep-all']) change = {};
    else if (values.days !== undefined || values.gib !== undefined) {
      change = {};
      if (values.days !== undefined) change.keepDays = number('--days', values.days);
      if (values.gib !== undefined) change.keepGiB = number('--gib', values.gib);
      const checked = retentionPolicy.safeParse(change);
      if (!checked.success)
        throw new Error(
          [...new Set(checked.error.issues.map((i) => String(i.path[0])))]
            .map((k) => RANGE[k]?.(k === 'keepDays' ? values.days : values.gib) ?? k)
            .join('; '),
        );
    }
  } catch (e) {
    const said = e instanceof UsageError ? e.message : `handoff store retention: ${(e as Error).message}.`;
    process.stderr.write(`${said} Nothing was changed.\n`);
    return 2;
  }
  const client = await connectHub('handoff store retention', values.hub, ' The setting is kept by the hub.');
  if (!client) return 2;
  try {
    const now = await call(client.connection, RetentionRequest, {});
    const set = change && (Object.keys(change).length === 0 ? {} : { ...now.policy, ...change });
    const r = set ? await call(client.connection, RetentionRequest, { set }) : now;
    process.stdout.write(values.json ? `${JSON.stringify(r, null, 2)}\n` : `${describe(r)}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`handoff store retention: ${(e as Error).message}\n`);
    return 1;
  } finally {
    client.close();
  }
}

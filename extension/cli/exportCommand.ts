// `handoff export --since 30d|DATE [--until …] [--as NAME] [--open] [--out FILE]`: history as JSON
// lines (one handoff with its receipts and state a line; settled ones in the order they settled,
// then the open ones), for keeping it elsewhere — before retention drops it, say. Read a page at a
// time from the running hub (the store's only reader and writer: it knows which lines are history
// and what retention is dropping), and written as it comes, so nothing holds it all.
import { closeSync, createWriteStream, openSync, unlinkSync } from 'node:fs';
import { call, ExportRequest } from '../protocol/control';
import { connectHub } from './hubConnection';
import { readFlags, UsageError } from './arguments';

const OPTIONS = {
  since: { type: 'string' },
  until: { type: 'string' },
  as: { type: 'string' },
  open: { type: 'boolean' },
  out: { type: 'string' },
  hub: { type: 'string' },
} as const;

const UNIT: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** An ISO date, or a duration back from now (30d, 12h, 2w, 90m). */
export function pointInTime(flag: string, v: string, now: number): number {
  const ago = /^(\d{1,6})([mhdw])$/.exec(v);
  if (ago) return now - Number(ago[1]) * UNIT[ago[2]];
  const t = /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(t))
    throw new Error(`${flag} "${v}" is neither a date (2026-05-01, 2026-05-01T12:00Z) nor a duration (30d, 12h, 2w)`);
  return t;
}

/** `path` made new (0600) and opened, or why not in a sentence: it is never overwritten. */
function newFile(path: string): number {
  try {
    return openSync(path, 'wx', 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new Error(
        `${path} exists already, and an export never overwrites a file: give another --out, or move that one away`,
        { cause: e },
      );
    if (code === 'ENOENT') throw new Error(`cannot make ${path}: its folder does not exist`, { cause: e });
    if (code === 'EACCES' || code === 'EPERM')
      throw new Error(`cannot make ${path}: no permission to write there`, { cause: e });
    throw e;
  }
}

/** What was written, and what was left out and why. */
function summary(count: number, open: number, openLeftOut: number, out: string | undefined): string {
  const written =
    count === 0
      ? `handoff export: no handoff ${open === 0 && openLeftOut === 0 ? 'sent' : 'settled'} in that time${out ? ` (no file made)` : ''}`
      : `handoff export: ${count} handoff(s) written${out ? ` to ${out}` : ''} (${count - open} settled, ${open} open)`;
  if (openLeftOut === 0) return `${written}.`;
  return `${written}; ${openLeftOut} open one(s) sent in that time were left out (not settled yet: no result, or not ACKed). Add --open to export them too.`;
}

export async function exportCommand(argv: string[]): Promise<number> {
  let since: number | undefined;
  let until: number | undefined;
  let fd: number | undefined;
  let values: ReturnType<typeof readFlags<typeof OPTIONS>>['values'];
  try {
    values = readFlags('handoff export', argv, OPTIONS).values;
    if (values.since === undefined) throw new Error('--since is needed: a date or a duration such as 30d');
    since = pointInTime('--since', values.since, Date.now());
    if (values.until !== undefined) until = pointInTime('--until', values.until, Date.now());
    if (until !== undefined && until <= since) throw new Error('--until is not after --since');
    // A new file only: an export never overwrites one (the copy kept before retention, say).
    if (values.out) fd = newFile(values.out);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    process.stderr.write(`handoff export: ${(e as Error).message}\n`);
    return 2;
  }
  const client = await connectHub('handoff export', values.hub);
  if (!client) {
    if (fd !== undefined) {
      closeSync(fd);
      unlinkSync(values.out!); // made empty a moment ago
    }
    return 2;
  }
  const out = fd !== undefined ? createWriteStream('', { fd }) : process.stdout;
  const write = (text: string) =>
    new Promise<void>((resolve, reject) => {
      out.write(text, (e) => (e ? reject(e) : resolve()));
    });
  let count = 0;
  let open = 0;
  let openLeftOut: number;
  let removed = 0;
  try {
    let after: string | undefined;
    do {
      const page = await call(client.connection, ExportRequest, {
        as: values.as,
        since,
        until,
        open: values.open,
        after,
        limit: 200,
      });
      if (page.lines.length > 0) await write(page.lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
      count += page.lines.length;
      open += page.lines.filter((l) => !l.settled).length;
      openLeftOut = page.openLeftOut ?? 0;
      removed += page.removed ?? 0;
      after = page.next;
    } while (after !== undefined);
    if (values.out) {
      await new Promise<void>((resolve, reject) =>
        (out as NodeJS.WritableStream).end((e?: Error) => (e ? reject(e) : resolve())),
      );
      // An empty file would only make the next run (with --open, say) refuse to overwrite it.
      if (count === 0) unlinkSync(values.out);
    }
    if (values.out || count === 0 || openLeftOut > 0)
      process.stderr.write(`${summary(count, open, openLeftOut, values.out)}\n`);
    if (removed > 0)
      process.stderr.write(
        `handoff export: ${removed} handoff(s) of history were removed by retention while this export read them, and are not in it\n`,
      );
    return 0;
  } catch (e) {
    process.stderr.write(`handoff export: ${(e as Error).message} (${count} handoff(s) written before it)\n`);
    return 1;
  } finally {
    client.close();
  }
}

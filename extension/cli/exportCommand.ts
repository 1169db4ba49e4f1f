// `handoff export --since 30d|DATE [--until …] [--as NAME] [--open] [--out FILE]`: history as JSON
// lines (one handoff with its receipts and state a line; settled ones in the order they settled,
// then the open ones), for keeping it elsewhere — before retention drops it, say. Read a page at a
// time from the running hub (the store's only reader and writer: it knows which lines are history
// and what retention is dropping), and written as it comes, so nothing holds it all.
import { closeSync, createWriteStream, openSync, unlinkSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { call, ExportRequest } from '../protocol/control';
import { connectHub } from './hubConnection';

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

export async function exportCommand(argv: string[]): Promise<number> {
  let since: number | undefined;
  let until: number | undefined;
  let fd: number | undefined;
  let values: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS }>>['values'];
  try {
    values = parseArgs({ args: argv, options: OPTIONS }).values;
    if (values.since === undefined) throw new Error('--since is needed: a date or a duration such as 30d');
    since = pointInTime('--since', values.since, Date.now());
    if (values.until !== undefined) until = pointInTime('--until', values.until, Date.now());
    if (until !== undefined && until <= since) throw new Error('--until is not after --since');
    // A new file only: an export never overwrites one (the copy kept before retention, say).
    if (values.out) fd = openSync(values.out, 'wx', 0o600);
  } catch (e) {
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
      removed += page.removed ?? 0;
      after = page.next;
    } while (after !== undefined);
    if (values.out) {
      await new Promise<void>((resolve, reject) =>
        (out as NodeJS.WritableStream).end((e?: Error) => (e ? reject(e) : resolve())),
      );
      process.stderr.write(`handoff export: ${count} handoff(s) written to ${values.out}\n`);
    }
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

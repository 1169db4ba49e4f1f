// `handoff store check|repair`: what is damaged in a store, and dropping it only when told to.
// Repair says what it would drop first; with --yes it keeps a copy of each damaged file beside it.
// Both ask the store's own lock (shared/processLock.ts), the one every hub takes, whichever socket
// or workspace it serves: a repair beside a live hub swapped a journal out from under it.
import { basename, resolve } from 'node:path';
import { takeProcessLock } from '../shared/processLock';
import { defaultStoreDir, findWorkspace } from '../shared/paths';
import { retentionCommand } from './retentionCommand';
import { closest, readFlags, UsageError } from './arguments';
import { checkStore, repairable, repairFile, type FileCheck } from '../hub/store/storeCheck';

/** Why a store file may not be there, which is no damage. */
const ABSENT_WHY: Record<string, string> = {
  'state.json': 'the hub writes it at its first checkpoint, once the journal has grown',
  'journal.2.ndjson': 'the second journal, used while a checkpoint is written',
};

function describe(c: FileCheck): string[] {
  if (c.missing)
    return [
      `${c.path}: not there yet, which is no damage (${ABSENT_WHY[basename(c.path)] ?? 'the hub makes it when it needs it'})`,
    ];
  if (c.torn)
    return [
      `${c.path}: ${c.records} record(s), then a torn tail at byte ${c.torn.at} (a write a crash interrupted; ${c.torn.records} whole record(s) after it, never acknowledged). The hub cuts it at its next start.`,
    ];
  if (!c.damage) return [`${c.path}: ok, ${c.records} record(s)`];
  const d = c.damage;
  const lines = [
    `${c.path}: DAMAGED at byte ${d.offset}: ${d.why}.`,
    repairable(c)
      ? `  repair would drop ${d.badLines} line(s)${d.laterRecords > 0 ? `, keeping the ${d.laterRecords} good record(s) after the first` : ''}:`
      : c.indexed || c.path.endsWith('.idx')
        ? '  repair cannot drop this (a sealed history segment and its index go together): restore the folder from a copy.'
        : '  repair cannot drop this (the damage is not in one open message line): restore the folder from a copy.',
    ...d.places.map((p) => `    byte ${p.at}, ${p.length} bytes: ${p.why}`),
  ];
  if (d.badLines > d.places.length) lines.push(`    … and ${d.badLines - d.places.length} more`);
  return lines;
}

export async function storeCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'retention') return retentionCommand(argv.slice(1));
  const { values, positionals } = readFlags(
    'handoff store',
    argv,
    { store: { type: 'string' }, workspace: { type: 'string' }, yes: { type: 'boolean' } },
    true,
  );
  const verb = positionals[0];
  if (verb !== 'check' && verb !== 'repair') {
    const meant = verb ? closest(verb, ['check', 'repair', 'retention']) : undefined;
    throw new UsageError(
      `handoff store ${verb ? `has no "${verb}"${meant ? ` — did you mean \`handoff store ${meant}\`?` : '.'}` : 'needs one of check, repair, retention.'}\n` +
        'usage: handoff store check|repair [--store DIR | --workspace DIR] [--yes]\n       handoff store retention [--days N] [--gib N] [--keep-all]',
    );
  }
  const workspace = values.workspace ? resolve(values.workspace) : findWorkspace(process.cwd());
  const dir = resolve(values.store ?? defaultStoreDir(workspace));
  // Held from here to the end: no hub opens the store while it is checked and repaired.
  const lock = await takeProcessLock(dir);
  if (!lock.owned) {
    const who = `A running hub${lock.holder ? ` (pid ${lock.holder.pid})` : ''} has ${dir} open`;
    if (verb === 'repair' && values.yes) {
      process.stderr.write(`${who}: stop it, then repair. Nothing was changed.\n`);
      return 1;
    }
    process.stderr.write(`${who}: what follows is read while it writes (a torn tail may be a write in flight).\n`);
  }
  try {
    return await checkOrRepair(verb, dir, !!values.yes);
  } finally {
    if (lock.owned) lock.release();
  }
}

async function checkOrRepair(verb: 'check' | 'repair', dir: string, yes: boolean): Promise<number> {
  const checks = await checkStore(dir);
  for (const c of checks) process.stdout.write(`${describe(c).join('\n')}\n`);
  const damaged = checks.filter((c) => c.damage);
  if (verb === 'check' || damaged.length === 0) return damaged.length > 0 ? 1 : 0;
  const fixable = damaged.filter(repairable);
  if (fixable.length === 0) return 1;
  if (!yes) {
    process.stdout.write('Nothing was changed. Run again with --yes to drop the lines listed above.\n');
    return 1;
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  for (const c of fixable) {
    const copy = await repairFile(c, stamp);
    process.stdout.write(`${c.path}: copied to ${copy}, then ${c.damage!.badLines} damaged line(s) dropped.\n`);
  }
  process.stdout.write('Start the hub again to open the store.\n');
  return fixable.length === damaged.length ? 0 : 1;
}

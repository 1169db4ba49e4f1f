// A store file that is damaged, not torn: the hub does not open the store, and says where and what
// to do. Nothing is cut or rewritten without the person's say (`handoff store repair --yes`).
import { dirname } from 'node:path';
import type { Damage } from './logScan';

export class StoreDamage extends Error {
  constructor(readonly damage: Damage) {
    super(damageText(damage));
    this.name = 'StoreDamage';
  }

  /**
   * A file that is wrong as a whole, not at a line: "PATH LEAD (WHY)", then what to do after
   * keeping a copy of the store folder.
   */
  static ofFile(path: string, why: string, lead: string, then: string): StoreDamage {
    const e = new StoreDamage({ path, offset: 0, why, badLines: 0, laterRecords: 0, places: [] });
    e.message = `${path} ${lead} (${why}). The hub did not open the store and changed nothing in it. Keep a copy of the store folder, then ${then}.`;
    return e;
  }
}

export function damageText(d: Damage): string {
  const dir = dirname(d.path);
  const later = d.laterRecords > 0 ? `, and ${d.laterRecords} good record(s) follow it` : '';
  return (
    `${d.path} is damaged at byte ${d.offset} (${d.why}): ${d.badLines} line(s) cannot be read${later}. ` +
    `The hub did not open the store and changed nothing in it. Keep a copy of ${dir}, then run ` +
    `\`handoff store check --store ${dir}\` to see the damage and \`handoff store repair --store ${dir} --yes\` ` +
    `to drop only the damaged lines (the file is copied beside itself first).`
  );
}

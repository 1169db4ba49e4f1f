// After `npm test`: every temp folder a test or bench made (the ledger tempDir.ts wrote) is gone,
// or this fails naming those left. Only this run's folders are looked at: other runs on the
// machine make folders of the same names.
import { existsSync, readFileSync, rmSync } from 'node:fs';

const ledger = process.argv[2];
const made = existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n').filter(Boolean) : [];
const left = made.filter((dir) => existsSync(dir));
rmSync(ledger, { force: true });
if (process.env.HANDOFF_KEEP_TEMP) {
  console.log(`HANDOFF_KEEP_TEMP: ${left.length} of ${made.length} temp folders kept`);
} else if (left.length > 0) {
  console.error(
    `${left.length} of the ${made.length} temp folders the tests made were left behind:\n${left.join('\n')}`,
  );
  process.exit(1);
} else {
  console.log(`all ${made.length} temp folders the tests made are gone`);
}

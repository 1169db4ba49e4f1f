// The Handoff output channel as the extension host wrote it: the VS Code server keeps its logs in
// the run's temp dir. What a test reads to see what the person's "Show Log" would show.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function handoffLog(tempDir: string): string {
  const file = (readdirSync(tempDir, { recursive: true }) as string[]).find((f) => /Handoff\.log$/.test(f));
  return file ? readFileSync(join(tempDir, file), 'utf8') : '';
}

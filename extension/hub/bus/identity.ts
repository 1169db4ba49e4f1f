// Identity names: exact match only. A near miss is an error that lists the nearest names —
// a typo must never become a silent send to nobody.

import { IDENTITY_PATTERN } from '../../protocol/names';

export { IDENTITY_PATTERN, MESSAGE_ID_PATTERN } from '../../protocol/names';

export function isIdentityName(name: string): boolean {
  return IDENTITY_PATTERN.test(name);
}

/** A known name that differs from `name` only in case: `Bob` beside `bob` would split one agent's mail. */
export function caseTwin(known: Iterable<string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const k of known) if (k !== name && k.toLowerCase() === lower) return k;
  return undefined;
}

export function caseTwinMessage(name: string, twin: string): string {
  return `"${name}" differs from the existing identity "${twin}" only in case; names are exact, so this would be a second identity easily mistaken for it. Use "${twin}", or another name.`;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** The known names closest to `wanted`, nearest first (case-insensitive matches count as 0). */
export function nearestNames(wanted: string, known: Iterable<string>, limit = 3): string[] {
  const lower = wanted.toLowerCase();
  const scored: { name: string; score: number }[] = [];
  for (const name of known) {
    const score = name.toLowerCase() === lower ? 0 : editDistance(lower, name.toLowerCase());
    const tolerance = Math.max(2, Math.floor(wanted.length / 3));
    if (score <= tolerance || name.toLowerCase().startsWith(lower) || lower.startsWith(name.toLowerCase())) {
      scored.push({ name, score });
    }
  }
  return scored
    .sort((x, y) => x.score - y.score || x.name.localeCompare(y.name))
    .slice(0, limit)
    .map((s) => s.name);
}

// A command's flags read into values, or a sentence a person reads: node:util's parseArgs throws
// `TypeError [ERR_PARSE_ARGS_UNKNOWN_OPTION]` with a stack trace, which told a new user of
// `handoff peers --jsn` nothing about `--json`.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** A mistake in how the command was typed: said in one sentence, exit code 2, nothing done. */
export class UsageError extends Error {}

/** How many single-letter edits (or swaps of two neighbours) turn `a` into `b`. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.length][b.length];
}

/** The one of `known` that `typed` is most likely a typo of, if any is close enough. */
export function closest(typed: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const d = k.startsWith(typed) && typed.length >= 2 ? 0.5 : distance(typed, k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  return bestD <= Math.max(1, Math.floor(typed.length / 3)) ? best : undefined;
}

/**
 * `argv` read with `options`; a flag the command does not take, a flag missing its value or a
 * stray word is a UsageError naming it, the flag meant (`--jsn`: did you mean --json?) and the
 * flags the command does take.
 */
export function readFlags<O extends Options>(who: string, argv: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    const code = (e as { code?: string }).code;
    const message = (e as Error).message;
    const flags = Object.keys(options).map((k) => `--${k}`);
    const takes = flags.length > 0 ? ` It takes ${flags.join(', ')}.` : ' It takes no flags.';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const flag = /'(-[^']*)'/.exec(message)?.[1] ?? '?';
      const meant = closest(flag.replace(/=.*/, ''), flags);
      const body = who === 'handoff send' ? ' (A body that starts with "-" goes after --.)' : '';
      throw new UsageError(
        `${who} has no option ${flag}${meant ? ` — did you mean ${meant}?` : `.${takes}`}${body} \`handoff --help\` shows every command.`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const flag = /'(--?[\w-]+)/.exec(message)?.[1] ?? '?';
      throw new UsageError(
        options[flag.replace(/^-+/, '')]?.type === 'boolean'
          ? `${who}: ${flag} is a switch and takes no value.`
          : `${who}: ${flag} needs a value (${flag} VALUE; one that starts with "-" is written ${flag}=VALUE).`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      const word = /'([^']*)'/.exec(message)?.[1] ?? '?';
      throw new UsageError(`${who} takes no word such as "${word}" here, only flags.${takes}`);
    }
    throw e;
  }
}

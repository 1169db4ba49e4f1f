// Quoting for each shell a launcher or a hook command passes through: a POSIX shell (Linux, macOS,
// and Git Bash, in which Claude Code runs hooks on Windows), PowerShell, and cmd.exe reading a
// `.cmd` file. Each is the whole rule for that shell, so a hostile path (spaces, `&`, `%PATH%`,
// `^`, `!`, quotes, non-ASCII) reaches the program as it was (test/unit/quote.test.ts).

/** A word for a POSIX shell: bare when it is plainly safe, else single-quoted ('\'' for a quote). */
export function shQuote(arg: string): string {
  return /^[\w./:=@,+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * A PowerShell string literal: single quotes, inside which nothing is special but a single quote,
 * written twice. PowerShell also takes the typographic single quotes (U+2018..U+201B) as quotes.
 */
export function psQuote(arg: string): string {
  return `'${arg.replace(/['\u2018\u2019\u201a\u201b]/g, (q) => q + q)}'`;
}

/** A command line PowerShell runs: `&` calls the (quoted) program; a quoted first word alone is a string. */
export function psCommand(program: string, args: string[]): string {
  return ['&', psQuote(program), ...args.map(psQuote)].join(' ');
}

/**
 * Text inside double quotes on a line of a `.cmd` file. Within quotes cmd.exe takes `&|<>^()!` as
 * they are (delayed expansion off); only `%` still expands, so it is doubled. A double quote or a
 * line break cannot be written inside quotes at all (neither can be in a Windows path): refused.
 */
export function batchQuoted(text: string): string {
  return `"${batchText(text)}"`;
}

/** `batchQuoted` without its quotes, to be put inside a quoted stretch. */
export function batchText(text: string): string {
  if (/["\r\n\0]/.test(text))
    throw new Error(`cannot write ${JSON.stringify(text)} into a Windows launcher: it holds a quote or a line break`);
  return text.replace(/%/g, '%%');
}

/**
 * An argument a `.cmd` launcher passes on with `%*`: cmd.exe parses that text again, so a word the
 * calling shell leaves unquoted must hold none of cmd's operators. Refused rather than mangled.
 */
export function batchSafeArg(arg: string): string {
  if (/[&|<>^"%\r\n\0]/.test(arg))
    throw new Error(
      `"${arg}" cannot be passed through a Windows .cmd launcher (cmd.exe would read its & | < > ^ % or quote as commands); use a name and a folder without them`,
    );
  return arg;
}

// The hub's log lines on stderr, as the hub writes them and the editor's "Handoff" log reads them:
// `[handoff hub <time> <level>] <text>`, so each line lands in the editor's log once, at its level.

export type LogLevel = 'info' | 'warn' | 'error';

/** Where a part of the hub says what happened; info unless it says otherwise. */
export type Log = (line: string, level?: LogLevel) => void;

export function formatHubLine(text: string, level: LogLevel, at: Date): string {
  return `[handoff hub ${at.toISOString()} ${level}] ${text}\n`;
}

const LINE = /^\[handoff hub \S+(?: (info|warn|error))?\] (.*)$/s;

/** A line of the hub's stderr: ours at its level; Node's own warnings as warnings; anything else
 * (a crash's stack trace) as an error. */
export function parseHubLine(line: string): { level: LogLevel; text: string } {
  const m = LINE.exec(line);
  if (m) return { level: (m[1] as LogLevel | undefined) ?? 'info', text: m[2] };
  return { level: /^\(node:\d+\) /.test(line) ? 'warn' : 'error', text: line };
}

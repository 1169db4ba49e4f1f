// The title of an opened handoff's tab (the last part of its handoff: URI), kept free of vscode for tests.

/** The tab's title: the sender and the body's first words, without what a path would split on. */
export function messageTitle(from: string, body: string): string {
  const line = body.replace(/[\s/\\]+/g, ' ').trim();
  const subject = line.length > 48 ? `${line.slice(0, 47)}…` : line;
  return `${from.replace(/[/\\]/g, ' ')}: ${subject}`;
}

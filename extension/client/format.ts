// Short human forms for ages and times, shared by the status bar and the panel model.

export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s}s`;
  if (s < 90 * 60) return `${Math.round(s / 60)}m`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

export function clock(at: number): string {
  return new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Untrusted text for a notification: VS Code turns `[label](command:…)` in a notification into a
 * clickable link, so a zero-width space between `]` and `(` keeps a body from planting one.
 */
export function inertLinks(text: string): string {
  return text.replace(/\]\(/g, ']\u200b(');
}

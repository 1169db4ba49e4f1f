// Codex's config.toml, edited by table: ours are replaced or removed whole, every other line is
// kept as the user wrote it. Codex forwards to stdio servers only whitelisted env vars plus those
// named in `env_vars`, so HANDOFF_HUB is named there, and TMUX/TMUX_PANE (the pane the hub may
// type a wake into, before Codex has run any hook).

/** JSON string escapes are valid TOML basic-string escapes. */
export const tomlString = (s: string) => JSON.stringify(s);

export function codexServerTable(
  name: string,
  launch: { command: string; args: string[]; env?: Record<string, string> },
): string {
  const env = Object.entries(launch.env ?? {})
    .map(([k, v]) => `${k} = ${tomlString(v)}`)
    .join(', ');
  return [
    `[mcp_servers.${name}]`,
    `command = ${tomlString(launch.command)}`,
    `args = [${launch.args.map(tomlString).join(', ')}]`,
    ...(env ? [`env = { ${env} }`] : []),
    'env_vars = ["HANDOFF_HUB", "TMUX", "TMUX_PANE"]',
    '',
  ].join('\n');
}

/**
 * Replaces the table `[name]` (and its sub-tables) with `table`, appends it if missing, or with
 * `table` undefined removes it. Everything else is kept as written.
 */
export function upsertTable(toml: string, name: string, table: string | undefined): string {
  const own = (header: string) => header === `[${name}]` || header.startsWith(`[${name}.`);
  const out: string[] = [];
  let skipping = false;
  let replaced = false;
  for (const line of toml.split('\n')) {
    const header = /^\s*\[/.test(line) ? line.trim() : undefined;
    if (header !== undefined) {
      skipping = own(header);
      if (skipping && !replaced) {
        if (table) out.push(...table.trimEnd().split('\n'), '');
        replaced = true;
      }
    }
    if (!skipping) out.push(line);
  }
  if (replaced || !table) return out.join('\n').replace(/\n{3,}/g, '\n\n');
  const base = toml.trimEnd();
  return `${base ? `${base}\n\n` : ''}${table}`;
}

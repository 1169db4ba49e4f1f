// Codex reads MCP servers from `[mcp_servers.NAME]` tables in ~/.codex/config.toml and forwards
// to them only whitelisted env vars plus those named in `env_vars` — so HANDOFF_HUB is named there.
import type { BridgeLaunch } from '../bridgeLaunch';

/** JSON string escapes are valid TOML basic-string escapes. */
const str = (s: string) => JSON.stringify(s);

export function codexTable(name: string, launch: BridgeLaunch): string {
  const env = Object.entries(launch.env).map(([k, v]) => `${k} = ${str(v)}`).join(', ');
  return [
    `[mcp_servers.${name}]`,
    `command = ${str(launch.command)}`,
    `args = [${launch.args.map(str).join(', ')}]`,
    `env = { ${env} }`,
    'env_vars = ["HANDOFF_HUB"]',
    '',
  ].join('\n');
}

/** Replaces the server's table (and its sub-tables) or appends it; everything else is kept as written. */
export function upsertCodexServer(toml: string, name: string, table: string): string {
  const lines = toml.split('\n');
  const own = (header: string) => header === `[mcp_servers.${name}]` || header.startsWith(`[mcp_servers.${name}.`);
  const out: string[] = [];
  let skipping = false;
  let replaced = false;
  for (const line of lines) {
    const header = /^\s*\[/.test(line) ? line.trim() : undefined;
    if (header !== undefined) {
      skipping = own(header);
      if (skipping && !replaced) {
        out.push(...table.trimEnd().split('\n'), '');
        replaced = true;
      }
    }
    if (!skipping) out.push(line);
  }
  if (replaced) return out.join('\n');
  const base = toml.trimEnd();
  return `${base ? `${base}\n\n` : ''}${table}`;
}

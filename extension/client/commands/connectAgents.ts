// "Handoff: Connect Claude Code" and "Handoff: Connect Codex": register the bridge with each
// agent's own configuration, the way its users would, and say exactly what was written where.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import * as vscode from 'vscode';
import { bridgeLaunch } from '../bridgeLaunch';
import type { HubLocation } from '../location';
import { claudeCommand } from '../settings';
import { codexTable, upsertCodexServer } from './codexConfig';

const run = promisify(execFile);
const SERVER_NAME = 'handoff';

function quote(arg: string): string {
  return /^[\w./:=@-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Claude Code's own CLI writes its config (local scope: this folder, this user). */
export async function connectClaude(extensionPath: string, location: HubLocation, log: vscode.LogOutputChannel): Promise<boolean> {
  const launch = bridgeLaunch(extensionPath);
  const envArgs = Object.entries(launch.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // The name goes before -e: claude's -e takes every following word up to `--` as KEY=VALUE.
  const add = ['mcp', 'add', '--scope', 'local', SERVER_NAME, ...envArgs, '--', launch.command, ...launch.args];
  const claude = claudeCommand();
  const shown = `${quote(claude)} ${add.map(quote).join(' ')}`;
  const opts = { cwd: location.workspace, timeout: 30_000 };
  try {
    // A previous registration (perhaps of an older extension path) is replaced, not duplicated.
    await run(claude, ['mcp', 'remove', '--scope', 'local', SERVER_NAME], opts).catch(() => undefined);
    const { stdout } = await run(claude, add, opts);
    log.info(`${shown}\n${stdout.trim()}`);
    void vscode.window.showInformationMessage(`Claude Code: added the "${SERVER_NAME}" MCP server for ${location.workspace} (local scope). Restart running claude sessions to pick it up.`);
    return true;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    const why = err.code === 'ENOENT' ? `\`${claude}\` was not found (install Claude Code, or set handoff.claudeCommand)` : (err.stderr?.trim() || err.message);
    log.error(`${shown} failed: ${why}`);
    const copy = 'Copy Command';
    const pick = await vscode.window.showErrorMessage(`Claude Code was NOT connected: ${why}. Or run this in the folder: ${shown}`, copy);
    if (pick === copy) await vscode.env.clipboard.writeText(shown);
    return false;
  }
}

export function codexConfigPath(): string {
  return join(process.env.CODEX_HOME || join(homedir(), '.codex'), 'config.toml');
}

export function connectCodex(extensionPath: string, log: vscode.LogOutputChannel): boolean {
  const file = codexConfigPath();
  try {
    const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const after = upsertCodexServer(before, SERVER_NAME, codexTable(SERVER_NAME, bridgeLaunch(extensionPath)));
    mkdirSync(dirname(file), { recursive: true });
    // Write-then-rename: Codex never reads a half-written config.
    const tmp = `${file}.handoff-${process.pid}.tmp`;
    writeFileSync(tmp, after, { mode: 0o600 });
    renameSync(tmp, file);
    log.info(`wrote [mcp_servers.${SERVER_NAME}] to ${file}`);
    void vscode.window.showInformationMessage(`Codex: wrote [mcp_servers.${SERVER_NAME}] (with env_vars = ["HANDOFF_HUB"]) to ${file}. Start codex from a terminal in this window.`);
    return true;
  } catch (e) {
    log.error(`writing ${file} failed: ${(e as Error).message}`);
    void vscode.window.showErrorMessage(`Codex was NOT connected: could not write ${file}: ${(e as Error).message}`);
    return false;
  }
}

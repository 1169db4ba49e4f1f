// The three real agent CLIs from npm, each in a HOME of its own and pointed at a scripted model.
// Only the model endpoint and the CLI's own first-run state are configured here: registering
// Handoff (MCP server, hooks, trust) is `handoff connect <cli>`'s job, and tests check it did.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { NODE, ROOT, tempDir } from '../hubProcess';
import { killStrays } from '../strays.mjs';

export type Cli = 'claude' | 'codex' | 'gemini';

/**
 * The devDependency's binary, or another version's where HANDOFF_TEST_<CLI>_BIN names it (the
 * version suite, test/agents/versions.test.ts, runs suites so on each version it installed).
 */
export const CLI_BIN: Record<Cli, string> = {
  get claude() {
    return process.env.HANDOFF_TEST_CLAUDE_BIN || join(ROOT, 'node_modules', '.bin', 'claude');
  },
  get codex() {
    return process.env.HANDOFF_TEST_CODEX_BIN || join(ROOT, 'node_modules', '.bin', 'codex');
  },
  // Run Gemini's bundle on our Node (≥ 22), not whatever `node` is first on PATH.
  get gemini() {
    return (
      process.env.HANDOFF_TEST_GEMINI_BIN || join(ROOT, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js')
    );
  },
};

/** A fake key: the CLIs want one; Claude Code remembers the approval of its last 20 characters. */
export const API_KEY = 'sk-ant-api03-scripted-model-key-0123456789abcdefghij';

export interface AgentHome {
  cli: Cli;
  /** The isolated HOME. */
  home: string;
  /** Where this CLI keeps its user config: ~/.claude, CODEX_HOME (~/.codex), ~/.gemini. */
  configDir: string;
  /** The environment the CLI runs with (and `handoff connect` should run with, to find the same config). */
  env: Record<string, string>;
}

export interface AgentHomeOptions {
  /** Extra environment, e.g. HANDOFF_HUB. */
  env?: Record<string, string>;
  /** Model name the CLI is told to use. */
  model?: string;
  /**
   * Codex sandbox (default workspace-write, like a user's). Not danger-full-access by default:
   * under it Codex runs every MCP tool unprompted, which would hide missing tool annotations.
   */
  codexSandbox?: 'read-only' | 'workspace-write' | 'danger-full-access';
}

/** Whether the CLI is installed (tests skip with a message when it is not). */
export function cliInstalled(cli: Cli): boolean {
  return existsSync(CLI_BIN[cli]);
}

// A clean environment, not the test runner's: a parent Claude Code / Codex / CI must not leak
// CLAUDE_*, CODEX_*, GITHUB_SHA (which turns on Gemini's strict env redaction) and the like.
function baseEnv(home: string): Record<string, string> {
  const keep = ['LANG', 'LC_ALL', 'USER', 'LOGNAME', 'TMPDIR', 'TZ'];
  const env: Record<string, string> = {};
  for (const k of keep) if (process.env[k]) env[k] = process.env[k]!;
  env.HOME = home;
  env.SHELL = '/bin/bash';
  env.TERM = 'xterm-256color';
  // `node` in hook commands and MCP servers is the test's Node; the CLIs' bins are on PATH too.
  // Another version's bins first, so that `claude --version` (connect asks it) is the one that runs.
  const others = (['claude', 'codex', 'gemini'] as const)
    .filter((c) => process.env[`HANDOFF_TEST_${c.toUpperCase()}_BIN`])
    .map((c) => (c === 'gemini' ? join(CLI_BIN.gemini, '..', '..', '..', '..', '.bin') : dirname(CLI_BIN[c])));
  env.PATH = [dirname(NODE), ...others, join(ROOT, 'node_modules', '.bin'), process.env.PATH ?? '/usr/bin:/bin'].join(
    ':',
  );
  env.NO_UPDATE_NOTIFIER = '1';
  return env;
}

function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function readJson(path: string): any {
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};
}

function claudeHome(home: string, modelUrl: string): AgentHome {
  const env = {
    ...baseEnv(home),
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: API_KEY,
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
  };
  // First-run dialogs (onboarding, "use this API key?") answered; folders are trusted per run.
  writeJson(join(home, '.claude.json'), {
    hasCompletedOnboarding: true,
    lastOnboardingVersion: '2.1.328',
    customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
    autoUpdates: false,
    projects: {},
  });
  mkdirSync(join(home, '.claude'), { recursive: true });
  return { cli: 'claude', home, configDir: join(home, '.claude'), env };
}

function codexHome(home: string, modelUrl: string, model: string, sandbox: string): AgentHome {
  const codexDir = join(home, '.codex');
  const env = { ...baseEnv(home), CODEX_HOME: codexDir, SCRIPTED_MODEL_KEY: API_KEY, NO_COLOR: '1' };
  mkdirSync(codexDir, { recursive: true });
  // No approval prompts (exec cannot answer them); MCP tool approval is left at its default —
  // making Handoff's tools run is connect's job.
  writeFileSync(
    join(codexDir, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "scripted"',
      'approval_policy = "never"',
      `sandbox_mode = "${sandbox}"`,
      'check_for_update_on_startup = false',
      '',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = "${modelUrl}/v1"`,
      'wire_api = "responses"',
      'env_key = "SCRIPTED_MODEL_KEY"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      'stream_idle_timeout_ms = 60000',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[feedback]',
      'enabled = false',
      '',
    ].join('\n'),
  );
  return { cli: 'codex', home, configDir: codexDir, env };
}

function geminiHome(home: string, modelUrl: string, model: string): AgentHome {
  const env = {
    ...baseEnv(home),
    GEMINI_API_KEY: API_KEY,
    GOOGLE_GEMINI_BASE_URL: modelUrl,
    // The CLI re-spawns itself for a bigger heap; one process is easier to time out and kill.
    GEMINI_CLI_NO_RELAUNCH: 'true',
  };
  writeJson(join(home, '.gemini', 'settings.json'), {
    security: { auth: { selectedType: 'gemini-api-key' } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    model: { name: model },
  });
  // The shell runs unprompted, like Claude's --allowedTools Bash (a user-tier policy rule; the
  // settings' tools.allowed is deprecated). MCP tools are left to connect.
  mkdirSync(join(home, '.gemini', 'policies'), { recursive: true });
  writeFileSync(
    join(home, '.gemini', 'policies', 'scripted-shell.toml'),
    '[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\npriority = 100\n',
  );
  return { cli: 'gemini', home, configDir: join(home, '.gemini'), env };
}

const homes = new Set<string>();

/** A fresh HOME for one CLI, pointed at the scripted model at `modelUrl`. */
export function agentHome(cli: Cli, modelUrl: string, opts: AgentHomeOptions = {}): AgentHome {
  const home = tempDir(`${cli}-home`);
  // What the CLI leaves running from this HOME (Codex's app-server daemon) ends with the test file.
  if (homes.size === 0) process.once('exit', () => homes.forEach((h) => killStrays(h)));
  homes.add(home);
  const h =
    cli === 'claude'
      ? claudeHome(home, modelUrl)
      : cli === 'codex'
        ? codexHome(home, modelUrl, opts.model ?? 'gpt-5.1-codex', opts.codexSandbox ?? 'workspace-write')
        : geminiHome(home, modelUrl, opts.model ?? 'gemini-2.5-flash');
  Object.assign(h.env, opts.env);
  return h;
}

/** Claude Code: pre-accept the folder's trust dialog (keeps whatever else ~/.claude.json holds). */
export function trustClaudeFolder(h: AgentHome, folder: string): void {
  const path = join(h.home, '.claude.json');
  const cfg = readJson(path);
  cfg.projects ??= {};
  cfg.projects[folder] = {
    allowedTools: [],
    hasTrustDialogAccepted: true,
    hasCompletedProjectOnboarding: true,
    ...cfg.projects[folder],
  };
  cfg.projects[folder].hasTrustDialogAccepted = true;
  writeJson(path, cfg);
}

/** Gemini CLI: trust a folder the way its trust dialog does (~/.gemini/trustedFolders.json). */
export function trustGeminiFolder(h: AgentHome, folder: string): void {
  const path = join(h.configDir, 'trustedFolders.json');
  writeJson(path, { ...readJson(path), [folder]: 'TRUST_FOLDER' });
}

export interface RunOptions {
  timeoutMs?: number;
  /** Claude Code's --allowedTools (default: Bash only — Handoff's tools must be allowed by connect). */
  allowedTools?: string[];
  /** Extra CLI arguments. */
  args?: string[];
  env?: Record<string, string>;
}

export interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
}

/** The command line of a one-shot turn. */
export function oneShotCommand(
  h: AgentHome,
  workspace: string,
  prompt: string,
  opts: RunOptions = {},
): { command: string; args: string[] } {
  if (h.cli === 'claude') {
    return {
      command: CLI_BIN.claude,
      args: ['-p', prompt, '--allowedTools', (opts.allowedTools ?? ['Bash']).join(','), ...(opts.args ?? [])],
    };
  }
  if (h.cli === 'codex') {
    return {
      command: CLI_BIN.codex,
      args: ['exec', '--skip-git-repo-check', '--color', 'never', '-C', workspace, ...(opts.args ?? []), prompt],
    };
  }
  return { command: NODE, args: [CLI_BIN.gemini, '-p', prompt, '--output-format', 'text', ...(opts.args ?? [])] };
}

/** Runs one non-interactive turn (`claude -p` / `codex exec` / `gemini -p`) in `workspace`. */
export function runAgent(h: AgentHome, workspace: string, prompt: string, opts: RunOptions = {}): Promise<AgentRun> {
  if (!cliInstalled(h.cli)) throw new Error(`${h.cli} CLI is not installed at ${CLI_BIN[h.cli]} (npm install)`);
  if (h.cli === 'claude') trustClaudeFolder(h, workspace);
  const { command, args } = oneShotCommand(h, workspace, prompt, opts);
  const timeoutMs = opts.timeoutMs ?? 90_000;
  const started = Date.now();
  // Its own process group, so a timeout kills the CLI and the MCP servers and hooks it started.
  const child = spawn(command, args, {
    cwd: workspace,
    env: { ...h.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }, timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, durationMs: Date.now() - started, timedOut });
    });
  });
}

/**
 * Whether a process runs whose command line holds `command`: a tool call's shell command while it
 * runs (each CLI hands it to a shell as one argument), for a test to act during the call.
 */
export function commandRunning(command: string): boolean {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(command)) return true;
    } catch {
      // exited while we looked
    }
  }
  return false;
}

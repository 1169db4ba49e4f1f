// An interactive agent session in a real terminal (tmux on a private socket): the only way to test
// an idle session that a hook, or the hub typing into its pane, wakes up. send-keys types, capture-pane reads the screen.
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE, tempDir } from '../hubProcess';
import { waitUntil } from '../wait';
import { CLI_BIN, trustClaudeFolder, trustGeminiFolder, type AgentHome } from './agents';

export interface TmuxSession {
  socket: string;
  /** Types text literally (no Enter). */
  type(text: string): void;
  /** Sends tmux key names: 'Enter', 'Escape', 'C-c', … */
  keys(...keys: string[]): void;
  /** Types text, then presses Enter a moment later. */
  submit(text: string): Promise<void>;
  /** The visible screen as plain text. */
  screen(): string;
  /** Waits until the screen matches, returns it; throws with the screen on timeout. */
  waitForScreen(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Whether the program in the pane has exited. */
  exited(): boolean;
  kill(): void;
}

export function tmuxAvailable(): boolean {
  return spawnSync('tmux', ['-V']).status === 0;
}

export interface InteractiveOptions {
  args?: string[];
  env?: Record<string, string>;
  width?: number;
  height?: number;
}

/**
 * Starts a CLI's interactive TUI in `workspace` under tmux, its first-run dialogs pre-answered
 * (Claude's onboarding and folder trust, Gemini's folder trust; Codex's custom provider has none).
 */
export function startInteractive(h: AgentHome, workspace: string, opts: InteractiveOptions = {}): TmuxSession {
  if (!tmuxAvailable())
    throw new Error('tmux is not installed: apt-get install -y tmux (needed for interactive agent sessions)');
  if (h.cli === 'claude') trustClaudeFolder(h, workspace);
  if (h.cli === 'gemini') trustGeminiFolder(h, workspace);
  const command =
    h.cli === 'gemini'
      ? [NODE, CLI_BIN.gemini]
      : h.cli === 'codex'
        ? [CLI_BIN.codex, '-C', workspace]
        : [CLI_BIN.claude];
  const dir = tempDir('tmux');
  const socket = join(dir, 'sock');
  // The pane runs a script, so the CLI gets exactly our environment rather than tmux's — but for
  // TMUX and TMUX_PANE, which tell a program (and the hooks it runs) which pane it is in.
  const env = { ...h.env, ...opts.env };
  const script = join(dir, 'run.sh');
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  writeFileSync(
    script,
    `#!/bin/sh\ncd ${q(workspace)}\nexec env -i ${Object.entries(env)
      .map(([k, v]) => q(`${k}=${v}`))
      .join(' ')} "TMUX=$TMUX" "TMUX_PANE=$TMUX_PANE" ${[...command, ...(opts.args ?? [])].map(q).join(' ')}\n`,
    { mode: 0o755 },
  );
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  tmux('new-session', '-d', '-s', 'agent', '-x', String(opts.width ?? 160), '-y', String(opts.height ?? 50), script);
  tmux('set-option', '-t', 'agent', 'remain-on-exit', 'on');
  const session: TmuxSession = {
    socket,
    type: (text) => void tmux('send-keys', '-t', 'agent', '-l', text),
    keys: (...keys) => void tmux('send-keys', '-t', 'agent', ...keys),
    async submit(text) {
      session.type(text);
      // Enter a moment later: text and Enter in one burst reads as a paste, which Claude Code does not submit.
      await new Promise((r) => setTimeout(r, 300)); // sleep: what tells a keystroke from a paste is time, not an event
      session.keys('Enter');
    },
    screen: () => tmux('capture-pane', '-p', '-t', 'agent'),
    waitForScreen: (pattern, timeoutMs = 20_000) =>
      waitUntil(
        () => {
          const s = session.screen();
          return pattern.test(s) && s;
        },
        timeoutMs,
        () => `${pattern} on the screen:\n${session.screen()}`,
        100,
      ),
    exited: () => tmux('display-message', '-p', '-t', 'agent', '#{pane_dead}').trim() === '1',
    kill() {
      try {
        tmux('kill-server');
      } catch {
        /* already gone */
      }
    },
  };
  return session;
}

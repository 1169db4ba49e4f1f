// Typing into an agent's tmux pane as a person would, and reading it first: tmux is the one
// terminal outside the editor that lets another process both see a pane and type into it.
import { execFile } from 'node:child_process';
import type { HookTerminal } from '../../../protocol/hook';
import { ENTER_AFTER_MS } from '../../../protocol/wake';
import { powers } from '../../../shared/platform/powers';

/** A tmux call that does not answer in this long is given up: the hub never waits on a terminal. */
const TMUX_TIMEOUT_MS = 2000;

/**
 * What a draft or a dialog changes in the pane: its prompt line (the line the cursor is on) and
 * the cursor's column there. Nothing else of the screen is kept: a TUI redraws its footer, hints
 * and status lines by itself, and may move its prompt up or down as lines above it come and go.
 */
export interface PaneLook {
  prompt: string;
  /** When a client of the pane's tmux session last had input (ms since the epoch). */
  inputAt: number;
  /** The pane is in copy mode or its program has exited: nothing typed would reach the CLI. */
  unusable: boolean;
}

/** The tmux pane a hook or bridge stated, if the hub can type into it: none without tmux (Windows). */
export function typablePane(t: HookTerminal | undefined): HookTerminal | undefined {
  return powers.tmux ? t : undefined;
}

function tmux(t: HookTerminal, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('tmux', ['-S', t.socket, ...args], { timeout: TMUX_TIMEOUT_MS, encoding: 'utf8' }, (e, out) =>
      e ? reject(e) : resolve(out),
    ),
  );
}

export async function lookAt(t: HookTerminal): Promise<PaneLook> {
  const [screen, facts, clients] = await Promise.all([
    tmux(t, ['capture-pane', '-p', '-t', t.pane]),
    tmux(t, [
      'display-message',
      '-p',
      '-t',
      t.pane,
      '#{cursor_x},#{cursor_y} #{pane_in_mode} #{pane_dead} #{session_id}',
    ]),
    tmux(t, ['list-clients', '-F', '#{client_activity} #{session_id}']),
  ]);
  const [cursor, inMode, dead, session] = facts.trim().split(' ');
  const [x, y] = cursor.split(',');
  let inputAt = 0;
  for (const line of clients.split('\n')) {
    const [activity, of] = line.trim().split(' ');
    if (of === session) inputAt = Math.max(inputAt, Number(activity) * 1000 || 0);
  }
  const line = screen.split('\n')[Number(y)] ?? '';
  return { prompt: `${x}|${line}`, inputAt, unusable: inMode === '1' || dead === '1' };
}

/** Types `text` literally, then Enter. */
export async function typeLine(t: HookTerminal, text: string): Promise<void> {
  await tmux(t, ['send-keys', '-t', t.pane, '-l', text]);
  await new Promise((r) => setTimeout(r, ENTER_AFTER_MS));
  await tmux(t, ['send-keys', '-t', t.pane, 'Enter']);
}

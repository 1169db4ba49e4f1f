// Which terminal a process runs in, when it can tell: the tmux pane, from what tmux sets in every
// pane (TMUX is `socket,pid,session`, TMUX_PANE `%N`). The hook and the bridge both report it, so
// the hub can wake an idle agent by typing into its pane.
import type { HookTerminal } from '../protocol/hook';

export function tmuxTerminal(env: NodeJS.ProcessEnv): HookTerminal | undefined {
  const socket = env.TMUX?.split(',')[0];
  const pane = env.TMUX_PANE;
  return socket?.startsWith('/') && pane && /^%\d{1,9}$/.test(pane) ? { kind: 'tmux', socket, pane } : undefined;
}

// The people at editor windows on this hub, in memory only: a window is listed while its control
// connection is open (like a session), and its person counts as there while that window was
// focused within PRESENCE_WINDOW_MS. Nothing on disk says a person is at the editor.
import { PRESENCE_WINDOW_MS, type PersonPresence } from '../../protocol/views';
import type { WakeMode } from '../../protocol/wake';

export interface WindowReport {
  identity: string;
  focused: boolean;
  /** The window's "handoff.escalateTo" setting: whom its person's unanswered handoffs escalate to. */
  escalateTo?: string;
  /** The window's "handoff.wakeIdleAgents" setting. */
  wakeIdleAgents?: WakeMode;
  /** Its extension host's pid, as an editor window (one holding the editor key) said. */
  extensionHost?: number;
}

interface EditorWindow extends WindowReport {
  /** When it last had focus: now while it has it. */
  focusedAt?: number;
  /** When it gained the focus it has now. */
  focusedSince?: number;
}

export class People {
  private readonly windows = new Map<string, EditorWindow>();

  /** A window says who sits at it and whether it has focus (at start, on every focus change). */
  report(window: string, r: WindowReport, now: number): void {
    const before = this.windows.get(window);
    const focusedAt = r.focused || before?.focused ? now : before?.focusedAt;
    const focusedSince = r.focused ? (before?.focused ? before.focusedSince : now) : undefined;
    this.windows.set(window, { ...r, focusedAt, focusedSince });
  }

  /** The window's connection closed. */
  drop(window: string): boolean {
    return this.windows.delete(window);
  }

  /** The extension hosts of the editor windows on this hub: where VS Code's own agent runs. */
  extensionHosts(): Set<number> {
    return new Set([...this.windows.values()].flatMap((w) => (w.extensionHost ? [w.extensionHost] : [])));
  }

  identities(): string[] {
    return [...new Set([...this.windows.values()].map((w) => w.identity))].sort();
  }

  presence(identity: string, now: number): PersonPresence | undefined {
    const mine = [...this.windows.values()].filter((w) => w.identity === identity);
    if (mine.length === 0) return undefined;
    const last = Math.max(...mine.map((w) => (w.focused ? now : (w.focusedAt ?? -Infinity))));
    const lastFocusedAt = Number.isFinite(last) ? last : undefined;
    return {
      live: lastFocusedAt !== undefined && now - lastFocusedAt <= PRESENCE_WINDOW_MS,
      windows: mine.length,
      lastFocusedAt,
    };
  }

  /**
   * The identity's window that notifies of a new handoff, so several windows do not: a focused one
   * (the one focused last, should two say so), else the one that had focus last.
   */
  notifier(identity: string): string | undefined {
    const rank = (w: EditorWindow): [number, number] =>
      w.focused ? [1, w.focusedSince ?? 0] : [0, w.focusedAt ?? -Infinity];
    let best: { key: string; rank: [number, number] } | undefined;
    for (const [key, w] of this.windows) {
      if (w.identity !== identity) continue;
      const r = rank(w);
      // A tie keeps the window that was here first.
      if (!best || r[0] > best.rank[0] || (r[0] === best.rank[0] && r[1] > best.rank[1])) best = { key, rank: r };
    }
    return best?.key;
  }

  /**
   * Whether the hub may type a wake into an idle agent's terminal: the most careful window here
   * decides (off, else ask, else on; on with no window, for agents in tmux outside any editor).
   */
  wakeMode(): WakeMode {
    let mode: WakeMode = 'on';
    for (const w of this.windows.values()) {
      if (w.wakeIdleAgents === 'off') return 'off';
      if (w.wakeIdleAgents === 'ask') mode = 'ask';
    }
    return mode;
  }

  /** The window focused most recently: where a person is most likely to see a question. */
  lastFocusedWindow(): string | undefined {
    let best: { key: string; at: number } | undefined;
    for (const [key, w] of this.windows)
      if (!best || (w.focusedAt ?? 0) > best.at) best = { key, at: w.focusedAt ?? 0 };
    return best?.key;
  }

  /**
   * Whom a sender's unanswered handoffs escalate to when the handoff names nobody: the
   * person of the most recently focused window (its escalateTo setting, else its identity).
   */
  escalationTarget(): string | undefined {
    const key = this.lastFocusedWindow();
    const best = key === undefined ? undefined : this.windows.get(key);
    return best && (best.escalateTo || best.identity);
  }
}

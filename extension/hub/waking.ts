// Waking an idle agent whose CLI has no wake of its own (Codex, Gemini): the hub types a short
// prompt into the session's tmux pane, as a person would, so the CLI starts a turn and its prompt
// hook surfaces the handoff. The wake is journaled as its own step; `surfaced` is still written
// only by the hook that then runs, so the receipt proves the model saw it.
//
// It types only into a session whose turn has ended and none started since, whose pane looks as it
// did when the turn ended (no draft in its prompt), where nobody typed in the last seconds, and at
// most once per handoff per session.
import type { HookCli, HookTerminal } from '../protocol/hook';
import type { Log } from '../protocol/hubLog';
import type { BusEvent, HotMessage } from './bus/model';
import { lookAt, typeLine, type PaneLook } from './wake/tmux';

/** Input in the pane's tmux session this recently means a person is there: wait for them. */
const QUIET_MS = 10_000;
/** A pane's rest look is taken once its CLI has redrawn after the turn: looks this far apart agree. */
const SETTLE_MS = 400;
const SETTLE_TRIES = 8;

export interface WakeTarget {
  /** The session key the hook surfaces into. */
  key: string;
  identity: string;
  cli: HookCli;
  terminal: HookTerminal;
}

export interface Pane {
  lookAt(t: HookTerminal): Promise<PaneLook>;
  typeLine(t: HookTerminal, text: string): Promise<void>;
}

export interface WakingDeps {
  /** The identity's oldest handoffs not yet surfaced in the session. */
  unsurfaced(identity: string, session: string): HotMessage[];
  commit(events: BusEvent[]): Promise<void>;
  /** Whether wakes are allowed (no editor window here says handoff.wakeIdleAgents off). */
  allowed(): boolean;
  node: string;
  now(): number;
  log: Log;
  pane?: Pane;
  /** How long after input in the pane's tmux session a wake waits (QUIET_MS; tests shorten it). */
  quietMs?: number;
}

/** The prompt typed into the pane: who sent what is waiting, and where to look. */
export function wakeText(items: HotMessage[]): string {
  const from = [...new Set(items.map((h) => h.message.from))].join(', ');
  return `New handoff${items.length > 1 ? 's' : ''} from ${from} — check your Handoff inbox`;
}

export class Waking {
  private readonly pane: Pane;
  /** Session key → its pane as it looked once its last turn ended. */
  private readonly rests = new Map<string, Promise<PaneLook | undefined>>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private readonly nudging = new Set<string>();
  private readonly quietMs: number;

  constructor(private readonly deps: WakingDeps) {
    this.pane = deps.pane ?? { lookAt, typeLine };
    this.quietMs = deps.quietMs ?? QUIET_MS;
  }

  /** Whether an idle session of this CLI in this terminal would be woken now. */
  wakes(cli: HookCli, terminal: HookTerminal | undefined): boolean {
    return cli !== 'claude' && !!terminal && this.deps.allowed();
  }

  /** The session's turn ended: how its pane looks at rest, once the CLI has redrawn. */
  rested(t: WakeTarget): void {
    if (t.cli === 'claude') return; // Claude Code wakes itself (its idle waiter)
    this.rests.set(t.key, this.settle(t.terminal));
  }

  /** A turn started: what the pane showed at rest no longer holds. */
  busy(key: string): void {
    this.rests.delete(key);
    clearTimeout(this.retries.get(key));
    this.retries.delete(key);
  }

  /**
   * Mail may be waiting for an idle session: types a wake if it is safe. `begin` is asked just
   * before typing, and marks the session busy if it is still idle.
   */
  async nudge(t: WakeTarget, begin: () => boolean): Promise<void> {
    if (!this.wakes(t.cli, t.terminal) || this.nudging.has(t.key)) return;
    this.nudging.add(t.key);
    try {
      const items = this.deps
        .unsurfaced(t.identity, t.key)
        .filter((h) => !h.deliveries[t.identity]?.wakes?.some((w) => w.session === t.key));
      if (items.length === 0) return;
      const why = await this.refusal(t);
      if (why === 'input') {
        this.deps.log(
          `waiting to wake ${t.identity} (${t.cli}) in tmux pane ${t.terminal.pane}: someone typed there lately`,
        );
        return this.retryLater(t, begin);
      }
      if (why) return this.deps.log(`did not wake ${t.identity} (${t.cli}) in tmux pane ${t.terminal.pane}: ${why}`);
      if (!begin()) return;
      await this.pane.typeLine(t.terminal, wakeText(items));
      const at = this.deps.now();
      const wake = { session: t.key, node: this.deps.node, at, how: 'tmux' as const, terminal: t.terminal.pane };
      await this.deps.commit(
        items.map((h) => ({ type: 'woken', id: h.message.id, recipient: t.identity, wake: { ...wake } })),
      );
      this.deps.log(`woke ${t.identity} (${t.cli}) in tmux pane ${t.terminal.pane} for ${items.length} handoff(s)`);
    } catch (e) {
      this.deps.log(`could not wake ${t.identity} in tmux pane ${t.terminal.pane}: ${(e as Error).message}`, 'warn');
    } finally {
      this.nudging.delete(t.key);
    }
  }

  /** Why typing now is not safe, or 'input' when someone typed there lately; undefined when it is. */
  private async refusal(t: WakeTarget): Promise<string | undefined> {
    const rest = await this.rests.get(t.key);
    if (!rest) return 'its pane was not seen at rest since its turn ended';
    const now = await this.pane.lookAt(t.terminal);
    if (now.unusable) return 'the pane is in copy mode or its program has exited';
    if (this.deps.now() - now.inputAt < this.quietMs) return 'input';
    if (now.cursor !== rest.cursor || now.screen !== rest.screen)
      return 'the pane changed since the turn ended (a draft in its prompt?)';
    return undefined;
  }

  private retryLater(t: WakeTarget, begin: () => boolean): void {
    clearTimeout(this.retries.get(t.key));
    const timer = setTimeout(() => {
      this.retries.delete(t.key);
      void this.nudge(t, begin);
    }, this.quietMs);
    timer.unref();
    this.retries.set(t.key, timer);
  }

  private async settle(terminal: HookTerminal): Promise<PaneLook | undefined> {
    try {
      let last: PaneLook | undefined;
      for (let i = 0; i < SETTLE_TRIES; i++) {
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        const look = await this.pane.lookAt(terminal);
        if (last && look.screen === last.screen && look.cursor === last.cursor) return look;
        last = look;
      }
      return undefined; // never still: something keeps drawing, so a draft could not be told apart
    } catch {
      return undefined;
    }
  }

  close(): void {
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }
}

// Waking an idle agent whose CLI has no wake of its own (Codex, Gemini): a short prompt is typed
// into the session's terminal, as a person would, so the CLI starts a turn and its prompt hook
// surfaces the handoff. In tmux the hub types it; in an editor's integrated terminal the window
// that owns the terminal does (wake/editor.ts). The wake is journaled as its own step; `surfaced`
// is still written only by the hook that then runs, so the receipt proves the model saw it.
//
// It types only into a session whose turn has ended and none started since, at most once per
// handoff per session (the hub records a wake before it types it in tmux; a window types before it
// answers, so what a window may have typed for is held back in memory before it is recorded, and
// when it does not answer in time), and never where a person is: a tmux pane's prompt line and
// cursor must be as they were once the turn ended (no draft, no dialog in its place) with nobody
// typing in the last seconds; an integrated terminal
// must not be the active one of a focused window, nor have been lately (the window decides). With
// "ask", the person at the most recently focused window says yes first, once per handoff.
import type { HookCli, HookTerminal } from '../../protocol/hook';
import type { Log } from '../../protocol/hubLog';
import { QUIET_MS, WAKE_FROM_MAX, wakeLine, type WakeAskParams, type WakeMode } from '../../protocol/wake';
import type { BusEvent, HotMessage } from '../bus/model';
import type { EditorTerminals, EditorWake } from './wake/editor';
import { lookAt, typeLine, type PaneLook } from './wake/tmux';

/** Agents no editor window had a terminal for, remembered (the oldest forgotten first). */
const NO_TERMINAL_KEPT = 1000;
/** Handoffs the person said yes or no to, or a window may have typed for, per session, remembered (the oldest forgotten first). */
const ANSWERS_KEPT = 1000;
/** A window's "ask again in" is kept within these bounds. */
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 60_000;
/** A pane's rest look is taken once its CLI has drawn its prompt after the turn: looks this far apart agree. */
const SETTLE_MS = 400;
const SETTLE_TRIES = 8;

export interface WakeTarget {
  /** The session key the hook surfaces into. */
  key: string;
  identity: string;
  cli: HookCli;
  /** Its tmux pane, if it runs in one: the hub types there itself. */
  terminal?: HookTerminal;
  /** Its agent process, if known: an editor window finds the integrated terminal running it. */
  agentPid?: number;
  /** The process ancestry its last hook reported, nearest first. */
  ancestors?: number[];
}

/** Marks the session busy just before typing (false: it is not idle any more); `undo` if nothing was typed. */
export interface Begin {
  (): boolean;
  undo?: () => void;
}

export interface Pane {
  lookAt(t: HookTerminal): Promise<PaneLook>;
  typeLine(t: HookTerminal, text: string): Promise<void>;
}

export interface WakingDeps {
  /** The identity's oldest handoffs not yet surfaced in the session. */
  unsurfaced(identity: string, session: string): HotMessage[];
  commit(events: BusEvent[]): Promise<void>;
  /** What the editor windows here allow together (handoff.wakeIdleAgents). */
  mode(): WakeMode;
  /** With "ask": the person's answer (no window, or no answer in time, is no). */
  askPerson?(p: WakeAskParams): Promise<boolean>;
  node: string;
  now(): number;
  log: Log;
  pane?: Pane;
  /** The editor windows that can type into their integrated terminals. */
  editor?: Pick<EditorTerminals, 'any' | 'wake' | 'generation'>;
  /** How long after input in the pane's tmux session a wake waits (QUIET_MS; tests shorten it). */
  quietMs?: number;
}

/** Notes `value` for each handoff of `items` under the session `key`; sessions and handoffs both bounded, the oldest forgotten first. */
function note<V>(bySession: Map<string, Map<string, V>>, key: string, items: HotMessage[], value: V): void {
  let noted = bySession.get(key);
  if (!noted) bySession.set(key, (noted = new Map()));
  if (bySession.size > ANSWERS_KEPT) bySession.delete(bySession.keys().next().value!);
  for (const h of items) noted.set(h.message.id, value);
  while (noted.size > ANSWERS_KEPT) noted.delete(noted.keys().next().value!);
}

/** Who sent what is waiting, for the prompt typed into its terminal. */
export function wakeSenders(items: HotMessage[]): string[] {
  return [...new Set(items.map((h) => h.message.from))].slice(0, WAKE_FROM_MAX);
}

/** The prompt typed into the pane: who sent what is waiting, and where to look. */
export function wakeText(items: HotMessage[]): string {
  return wakeLine(wakeSenders(items), items.length);
}

export class Waking {
  private readonly pane: Pane;
  /** Session key → its pane as it looked once its last turn ended. */
  private readonly rests = new Map<string, Promise<PaneLook | undefined>>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private readonly nudging = new Set<string>();
  /** Agent pid → the editor windows' generation when none of them had a terminal running it. */
  private readonly noTerminal = new Map<number, number>();
  private readonly quietMs: number;
  /** Session key → the handoffs its person answered "Wake" or "Not now" for (with "ask"). */
  private readonly answered = new Map<string, Map<string, boolean>>();
  /** Session key → handoffs a window may have typed a wake for (unrecorded, or no answer in time): never asked again. */
  private readonly heldBack = new Map<string, Map<string, true>>();

  constructor(private readonly deps: WakingDeps) {
    this.pane = deps.pane ?? { lookAt, typeLine };
    this.quietMs = deps.quietMs ?? QUIET_MS;
  }

  /**
   * Whether an idle session of this CLI, in its tmux pane or an editor's terminal, would be woken
   * now (with "ask" that is the person's choice: not promised).
   */
  wakes(t: Pick<WakeTarget, 'cli' | 'terminal' | 'agentPid'>): boolean {
    return this.deps.mode() === 'on' && this.reachable(t);
  }

  private reachable(t: Pick<WakeTarget, 'cli' | 'terminal' | 'agentPid'>): boolean {
    if (t.cli === 'claude' || t.cli === 'vscode') return false; // wakes itself; a chat has no terminal
    if (t.terminal) return true;
    const { editor } = this.deps;
    // No window had its terminal (an external terminal): not promised until another window comes.
    return !!t.agentPid && !!editor?.any && this.noTerminal.get(t.agentPid) !== editor.generation;
  }

  /** The session's turn ended: how its pane looks at rest, once the CLI has redrawn. */
  rested(t: WakeTarget): void {
    if (t.cli === 'claude' || t.cli === 'vscode' || !t.terminal) return; // Claude Code wakes itself; a chat has no pane
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
  async nudge(t: WakeTarget, begin: Begin): Promise<void> {
    if (this.deps.mode() === 'off' || !this.reachable(t) || this.nudging.has(t.key)) return;
    this.nudging.add(t.key);
    try {
      const answered = this.answered.get(t.key);
      const heldBack = this.heldBack.get(t.key);
      const items = this.deps
        .unsurfaced(t.identity, t.key)
        .filter((h) => !h.deliveries[t.identity]?.wakes?.some((w) => w.session === t.key))
        .filter((h) => answered?.get(h.message.id) !== false && !heldBack?.has(h.message.id));
      if (items.length === 0) return;
      if (!t.terminal) {
        if (!(await this.personAgrees(t, items, 'its editor terminal'))) return;
        return await this.inEditor(t, items, begin);
      }
      const pane = t.terminal;
      const why = await this.refusal(t, pane);
      if (why === 'input') {
        this.deps.log(`waiting to wake ${t.identity} (${t.cli}) in tmux pane ${pane.pane}: someone typed there lately`);
        return this.retryLater(t, begin, this.quietMs);
      }
      if (why) return this.deps.log(`did not wake ${t.identity} (${t.cli}) in tmux pane ${pane.pane}: ${why}`);
      if (!(await this.personAgrees(t, items, `tmux pane ${pane.pane}`))) return;
      // The person may have taken a while: the pane must still be as its turn left it.
      const since = await this.refusal(t, pane);
      if (since === 'input') return this.retryLater(t, begin, this.quietMs);
      if (since) return this.deps.log(`did not wake ${t.identity} (${t.cli}) in tmux pane ${pane.pane}: ${since}`);
      if (!begin()) return;
      // Recorded first: a record that fails types nothing, so the next arrival cannot type it again.
      try {
        await this.record(t, items, 'tmux', pane.pane);
        await this.pane.typeLine(pane, wakeText(items));
      } catch (e) {
        begin.undo?.();
        throw e;
      }
      this.woke(t, items, 'tmux', pane.pane);
    } catch (e) {
      const where = t.terminal ? `tmux pane ${t.terminal.pane}` : 'its editor terminal';
      this.deps.log(`could not wake ${t.identity} in ${where}: ${(e as Error).message}`, 'warn');
    } finally {
      this.nudging.delete(t.key);
    }
  }

  /**
   * With "ask": whether the person said "Wake" to these handoffs, asking once for any they have not
   * answered; "Not now" (or no answer) holds for those handoffs, a new one asks again.
   */
  private async personAgrees(t: WakeTarget, items: HotMessage[], where: string): Promise<boolean> {
    if (this.deps.mode() !== 'ask') return true;
    const answered = this.answered.get(t.key);
    if (answered && items.every((h) => answered.get(h.message.id) === true)) return true;
    const yes =
      (await this.deps.askPerson?.({
        identity: t.identity,
        cli: t.cli,
        where,
        from: wakeSenders(items),
        count: items.length,
      })) === true;
    note(this.answered, t.key, items, yes);
    if (!yes) this.deps.log(`did not wake ${t.identity} (${t.cli}): the person said not now`);
    return yes;
  }

  /** No tmux pane: the editor window whose integrated terminal runs the agent types the wake, if the person is not at it. */
  private async inEditor(t: WakeTarget, items: HotMessage[], begin: Begin): Promise<void> {
    const { editor } = this.deps;
    if (!editor || !t.agentPid || !begin()) return;
    const generation = editor.generation;
    let answer: EditorWake;
    try {
      answer = await editor.wake({
        agentPid: t.agentPid,
        ancestors: t.ancestors ?? [],
        from: wakeSenders(items),
        count: items.length,
      });
    } catch (e) {
      begin.undo?.();
      throw e;
    }
    if ('unanswered' in answer) return this.mayHaveTyped(t, items, begin, answer);
    if (answer.woken) {
      note(this.heldBack, t.key, items, true); // typed already: a record that fails must not let it be typed again
      await this.record(t, items, 'terminal', answer.terminal);
      return this.woke(t, items, 'terminal', answer.terminal);
    }
    begin.undo?.();
    if (!answer.found) {
      this.noTerminal.set(t.agentPid, generation);
      if (this.noTerminal.size > NO_TERMINAL_KEPT) this.noTerminal.delete(this.noTerminal.keys().next().value!);
    }
    if (answer.retryInMs !== undefined) {
      this.deps.log(`waiting to wake ${t.identity} (${t.cli}) in its editor terminal: ${answer.why}`);
      return this.retryLater(t, begin, Math.min(Math.max(answer.retryInMs, RETRY_MIN_MS), RETRY_MAX_MS));
    }
    this.deps.log(`did not wake ${t.identity} (${t.cli}) in an editor terminal: ${answer.why}`);
  }

  /**
   * No window answered in time, yet one may still type: these handoffs are not asked for again in
   * this session, and the wake is recorded if it answers that it typed.
   */
  private mayHaveTyped(
    t: WakeTarget,
    items: HotMessage[],
    begin: Begin,
    answer: Extract<EditorWake, { unanswered: string }>,
  ): void {
    begin.undo?.(); // the woken CLI's hook marks it busy, if it was woken
    note(this.heldBack, t.key, items, true);
    this.deps.log(
      `may have woken ${t.identity} (${t.cli}) in an editor terminal: ${answer.unanswered}; not asked again for these handoffs`,
      'warn',
    );
    void answer.late
      .then(async (terminal) => {
        if (terminal === undefined) return;
        await this.record(t, items, 'terminal', terminal);
        this.woke(t, items, 'terminal', terminal);
      })
      .catch((e: Error) => this.deps.log(`could not record a late wake of ${t.identity}: ${e.message}`, 'warn'));
  }

  private async record(t: WakeTarget, items: HotMessage[], how: 'tmux' | 'terminal', terminal: string): Promise<void> {
    const wake = { session: t.key, node: this.deps.node, at: this.deps.now(), how, terminal };
    await this.deps.commit(
      items.map((h) => ({ type: 'woken', id: h.message.id, recipient: t.identity, wake: { ...wake } })),
    );
  }

  private woke(t: WakeTarget, items: HotMessage[], how: 'tmux' | 'terminal', terminal: string): void {
    const where = how === 'tmux' ? `tmux pane ${terminal}` : `editor terminal "${terminal}"`;
    this.deps.log(`woke ${t.identity} (${t.cli}) in ${where} for ${items.length} handoff(s)`);
  }

  /** Why typing now is not safe, or 'input' when someone typed there lately; undefined when it is. */
  private async refusal(t: WakeTarget, pane: HookTerminal): Promise<string | undefined> {
    const rest = await this.rests.get(t.key);
    if (!rest) return 'its pane was not seen at rest since its turn ended';
    const now = await this.pane.lookAt(pane);
    if (now.unusable) return 'the pane is in copy mode or its program has exited';
    if (this.deps.now() - now.inputAt < this.quietMs) return 'input';
    // Only the prompt line and the cursor: what the TUI redraws elsewhere by itself (Gemini's
    // footer, hints, "Executing Hooks") is not a person's, and under load it is still drawing
    // long after the turn's end was heard.
    if (now.prompt !== rest.prompt) return 'its prompt changed since the turn ended (a draft or a dialog?)';
    return undefined;
  }

  private retryLater(t: WakeTarget, begin: Begin, ms: number): void {
    clearTimeout(this.retries.get(t.key));
    const timer = setTimeout(() => {
      this.retries.delete(t.key);
      void this.nudge(t, begin);
    }, ms);
    timer.unref();
    this.retries.set(t.key, timer);
  }

  private async settle(terminal: HookTerminal): Promise<PaneLook | undefined> {
    try {
      let last: PaneLook | undefined;
      for (let i = 0; i < SETTLE_TRIES; i++) {
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        const look = await this.pane.lookAt(terminal);
        if (last && look.prompt === last.prompt) return look;
        last = look;
      }
      return undefined; // its prompt never still: a draft could not be told apart
    } catch {
      return undefined;
    }
  }

  close(): void {
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }
}

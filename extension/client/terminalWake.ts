// Types the hub's wake into the integrated terminal that runs an idle agent, as a person would:
// the line, then Enter a moment later. Only this window knows which of its terminals runs which
// process (a terminal's processId against the agent's ancestry in /proc), and whether the person
// is at it.
//
// "At it" is what the stable API can tell: the active terminal of a focused window (keystrokes
// can reach no other terminal), now or within the quiet time. Terminal input itself is not
// observable: `TerminalState.isInteractedWith` flips once per terminal, ever, and an extension's
// own sendText flips it too, so it cannot say "lately".
import * as vscode from 'vscode';
import { ENTER_AFTER_MS, QUIET_MS, readWakeParams, wakeLine, type TerminalWakeAnswer } from '../protocol/wake';
import { ancestry } from '../shared/proc';
import { pickTerminal, processChain, type TerminalFacts } from './terminalPick';

/** A terminal whose process id does not resolve in this long is not the one (the hub waits 5 s for the answer). */
const PID_MS = 3000;
/** Answers kept for the API (tests, diagnostics). */
const KEPT = 20;

export interface WakeRecord {
  at: number;
  agentPid: number;
  answer: TerminalWakeAnswer;
}

const pidOf = (t: vscode.Terminal): Promise<number | undefined> =>
  Promise.race([
    Promise.resolve(t.processId).catch(() => undefined),
    new Promise<undefined>((r) => setTimeout(r, PID_MS)),
  ]);

export class TerminalWake implements vscode.Disposable {
  /** When the person was last at each terminal (active while the window had focus). */
  private readonly personAt = new Map<vscode.Terminal, number>();
  /** The terminal the person is at now: active in a focused window. */
  private at?: vscode.Terminal;
  private readonly subscriptions: vscode.Disposable[];
  readonly answers: WakeRecord[] = [];

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly quietMs = Number(process.env.HANDOFF_WAKE_QUIET_MS) || QUIET_MS,
  ) {
    this.look();
    this.subscriptions = [
      vscode.window.onDidChangeActiveTerminal(() => this.look()),
      vscode.window.onDidChangeWindowState(() => this.look()),
      vscode.window.onDidCloseTerminal((t) => this.personAt.delete(t)),
    ];
  }

  /** The person's terminal may have changed: the one they leave and the one they go to were both used now. */
  private look(): void {
    const now = Date.now();
    if (this.at) this.personAt.set(this.at, now);
    this.at = vscode.window.state.focused ? vscode.window.activeTerminal : undefined;
    if (this.at) this.personAt.set(this.at, now);
  }

  /** The hub's request: woken with the terminal's name, or not and why. */
  async wake(raw: unknown): Promise<TerminalWakeAnswer> {
    const p = readWakeParams(raw);
    if (typeof p === 'string') return this.answer(0, { woken: false, found: false, why: `bad request: ${p}` });
    this.look();
    const terminals = [...vscode.window.terminals];
    const facts: TerminalFacts[] = await Promise.all(
      terminals.map(async (t) => ({
        name: t.name,
        shellPid: await pidOf(t),
        active: t === vscode.window.activeTerminal,
        personAt: this.personAt.get(t),
      })),
    );
    const chain = processChain(p.agentPid, ancestry(p.agentPid), p.ancestors);
    const pick = pickTerminal(facts, chain, vscode.window.state.focused, Date.now(), this.quietMs);
    if (!('index' in pick)) return this.answer(p.agentPid, { woken: false, ...pick });
    const terminal = terminals[pick.index];
    terminal.sendText(wakeLine(p.from, p.count), false);
    await new Promise((r) => setTimeout(r, ENTER_AFTER_MS));
    terminal.sendText('\r', false);
    return this.answer(p.agentPid, { woken: true, terminal: terminal.name });
  }

  private answer(agentPid: number, answer: TerminalWakeAnswer): TerminalWakeAnswer {
    this.answers.push({ at: Date.now(), agentPid, answer });
    if (this.answers.length > KEPT) this.answers.shift();
    if (answer.woken) this.log.info(`typed a wake for agent pid ${agentPid} into terminal "${answer.terminal}"`);
    else this.log.info(`did not wake agent pid ${agentPid}: ${answer.why}`);
    return answer;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}

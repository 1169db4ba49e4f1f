// The editor windows on this hub that can type a wake into one of their integrated terminals: the
// one whose stdio runs the hub and those sharing it over the socket. Only the window whose terminal
// runs the agent can; the hub asks each in turn and takes the first that did. With "ask", a window
// also puts the question to its person first. A window that does not answer in time may still
// type: the hub is told so, and its late answer, so that the handoffs are never asked for again.
import type { TerminalWakeAnswer, TerminalWakeParams, WakeAskParams } from '../../../protocol/wake';

/** A window that does not answer in this long is passed over: the hub never waits on an editor. */
const ANSWER_MS = 5000;
/** A question the person has not answered in this long is a "no" (it may be asked again later). */
const PERSON_MS = 120_000;
/** A terminal's name as journaled and shown: one short line. */
const NAME_CHARS = 80;

export type AskWindow = (p: TerminalWakeParams) => Promise<TerminalWakeAnswer>;

/**
 * What the windows did: a window's answer, or that one did not answer in time (it may still type)
 * with the terminal it names if it does answer that it typed.
 */
export type EditorWake = TerminalWakeAnswer | { unanswered: string; late: Promise<string | undefined> };

const LATE = Symbol('no answer in time');

/** What the hub can ask an editor window. */
export interface EditorWindowCalls {
  wake: AskWindow;
  /** Puts the question to the window's person; true for "Wake". */
  askPerson(p: WakeAskParams): Promise<boolean>;
}

/** The call's answer, or LATE once `ms` pass without one. */
async function within<T>(ms: number, call: Promise<T>): Promise<T | typeof LATE> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), ms);
  });
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

export class EditorTerminals {
  private readonly windows = new Map<string, EditorWindowCalls>();
  /** Bumped when a window comes: a terminal no window had may be in the new one. */
  private windowsSeen = 0;

  constructor(
    private readonly answerMs = ANSWER_MS,
    private readonly personMs = PERSON_MS,
  ) {}

  /** A window reported presence on this connection: it may be asked. */
  add(window: string, calls: EditorWindowCalls): void {
    if (!this.windows.has(window)) this.windowsSeen++;
    this.windows.set(window, calls);
  }

  /** Asks the person at `window` (or, without it, any window's) whether to wake; no answer in time is "no". */
  async askPerson(window: string | undefined, p: WakeAskParams): Promise<boolean> {
    const calls = (window !== undefined && this.windows.get(window)) || this.windows.values().next().value;
    if (!calls) return false;
    try {
      return (await within(this.personMs, calls.askPerson(p))) === true; // LATE is no
    } catch {
      return false;
    }
  }

  /** Changes whenever a window comes, so a "no window has its terminal" can be asked again. */
  get generation(): number {
    return this.windowsSeen;
  }

  drop(window: string): void {
    this.windows.delete(window);
  }

  get any(): boolean {
    return this.windows.size > 0;
  }

  /**
   * Asks each window until one woke the agent. Otherwise the refusal of the window whose terminal
   * runs it (the person is at it: `retryInMs`), that one did not answer in time, or that no window
   * has such a terminal.
   */
  async wake(p: TerminalWakeParams): Promise<EditorWake> {
    const refusals: string[] = [];
    let unanswered: Extract<EditorWake, { unanswered: string }> | undefined;
    for (const [window, calls] of [...this.windows]) {
      const call = calls.wake(p);
      let a: TerminalWakeAnswer | typeof LATE;
      try {
        a = await within(this.answerMs, call);
      } catch (e) {
        refusals.push(`window ${window}: ${(e as Error).message}`);
        continue;
      }
      if (a === LATE) {
        unanswered ??= {
          unanswered: `window ${window} did not answer in ${this.answerMs} ms`,
          late: call.then(
            (late) => (late?.woken === true ? cleanName(late.terminal) : undefined),
            () => undefined,
          ),
        };
        continue;
      }
      if (a?.woken === true) return { woken: true, terminal: cleanName(a.terminal) };
      if (a?.found) return { woken: false, found: true, why: String(a.why), retryInMs: a.retryInMs };
      refusals.push(String(a?.why));
    }
    if (unanswered) return unanswered;
    const why =
      refusals.length === 0
        ? 'no editor window is on this hub'
        : `no integrated terminal runs it (${refusals.join('; ')})`;
    return { woken: false, found: false, why };
  }
}

/** A terminal's name is shown and logged on one line. */
const cleanName = (name: unknown) =>
  String(name)
    // eslint-disable-next-line no-control-regex -- control characters are what it takes out
    .replace(/[\u0000-\u001f\u007f]/g, '?')
    .slice(0, NAME_CHARS);

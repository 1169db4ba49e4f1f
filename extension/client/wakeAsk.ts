// "handoff.wakeIdleAgents": "ask" — the hub puts the question to the person before it types a
// wake into an idle agent's terminal. A notification with two buttons; closing it is "Not now".
import * as vscode from 'vscode';
import { readWakeAskParams, type WakeAskAnswer, type WakeAskParams } from '../protocol/wake';

const WAKE = 'Wake';
const NOT_NOW = 'Not now';
const CLI_NAMES: Record<string, string> = { codex: 'Codex', gemini: 'Gemini CLI', claude: 'Claude Code' };

/** The question as the person reads it: names and counts only, each checked by readWakeAskParams. */
export function wakeQuestion(p: WakeAskParams): string {
  const handoffs = p.count === 1 ? 'a handoff' : `${p.count} handoffs`;
  return `${p.identity} (${CLI_NAMES[p.cli] ?? p.cli}) is idle with ${handoffs} from ${p.from.join(', ')}. Wake it by typing a line into ${p.where}?`;
}

/** Questions kept for the API (tests, diagnostics). */
const KEPT = 20;

export interface WakeQuestion {
  at: number;
  text: string;
  /** The person's answer once given: "Wake", "Not now" or "closed". */
  choice?: string;
}

export class WakeAsk {
  readonly asked: WakeQuestion[] = [];

  constructor(private readonly log: vscode.LogOutputChannel) {}

  async ask(raw: unknown): Promise<WakeAskAnswer> {
    const p = readWakeAskParams(raw);
    if (typeof p === 'string') {
      this.log.warn(`the hub asked to wake an agent with a bad request: ${p}`);
      return { wake: false };
    }
    const question: WakeQuestion = { at: Date.now(), text: wakeQuestion(p) };
    this.asked.push(question);
    if (this.asked.length > KEPT) this.asked.shift();
    this.log.info(`asking whether to wake ${p.identity} (${p.cli})`);
    const choice = await vscode.window.showInformationMessage(question.text, WAKE, NOT_NOW);
    question.choice = choice ?? 'closed';
    this.log.info(`asked whether to wake ${p.identity} (${p.cli}): ${question.choice}`);
    return { wake: choice === WAKE };
  }
}

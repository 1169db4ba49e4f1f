// Attention (G8): handoffs reach the recipient's model through its CLI's hooks, once per session.
// The hub keeps, in memory only, the hook sessions it has heard from lately (busy or idle, an idle
// waiter) and the claims in flight. A hook's answer is a claim: it becomes a journaled `surfaced`
// only when the hook confirms it printed it — a hook cut off by its time budget surfaces nothing,
// and the next hook of the session gets the same handoffs again.
import type { HookAnswer, HookCli, HookHello, HookItem, HookTerminal } from '../../protocol/hook';
import type { SeenWhen } from '../../protocol/views';
import { surfacedEvent, unsurfacedFor } from '../bus/surfacing';
import { withBody } from '../bus/body';
import { nearestAgent } from '../presence/agentTree';
import { BusError } from '../bus/errors';
import type { BusEvent, HotMessage, SurfacePath } from '../bus/model';
import { ExpiringMap } from '../presence/expiringMap';
import { markProcess, stillRuns, type ProcessMark } from '../../shared/proc';
import { HOOK_BYTES } from './budgets';
import { renderMessage } from './render';
import type { SessionRegistry } from '../presence/sessions';
import type { Begin, WakeTarget, Waking } from './waking';
import { typablePane } from './wake/tmux';

/**
 * The handoffs' text in one hook answer, in bytes: HOOK_BYTES less what the hook's own lines around
 * them take (deliver/budgets.ts). The rest wait for the next hook; the model is told how many, and
 * to page the inbox.
 */
const ITEMS_BYTES = HOOK_BYTES - 1024;
/** A long body is cut in the hook's text, in bytes: get_message has it whole. */
const BODY_BYTES = 4000;
/** No handoff renders in fewer bytes (its header line, the data line, the fence): how many to look at. */
const LEAST_ITEM_BYTES = 256;
/** A hook session not heard from for this long no longer says when its agent will look. */
const STALE_MS = 30 * 60_000;

/** Handoffs handed out and not yet confirmed: settle(true) journals them, settle(false) frees them. */
export interface Claim {
  answer: HookAnswer;
  settle(delivered: boolean): Promise<void>;
}

interface HookSession {
  key: string;
  identity: string;
  cli: HookCli;
  busy: boolean;
  waiter?: { answer: (c: Claim) => void; timer: NodeJS.Timeout };
  /** Where its CLI runs, as its last hook said. */
  terminal?: HookTerminal;
  /**
   * Its agent process (its live MCP session's), for an editor window to find the terminal running
   * it; a wake is typed only while that very process runs.
   */
  agent?: ProcessMark;
  /** Its last hook's process ancestry, nearest first. */
  ancestors?: number[];
  /** Set while a wake typed for it has not been followed by a hook: undoing a refused wake clears only that. */
  wakeToken?: object;
}

export interface AttentionDeps {
  /** Of `ids` (a tool result's page), those open for the identity, oldest first. */
  page(identity: string, ids: Set<string>): HotMessage[];
  /** The oldest `limit` handoffs not yet seen in `session` nor claimed for it, and how many there are (MailIndex). */
  unsurfaced(
    identity: string,
    session: string,
    claimed: ReadonlySet<string>,
    limit: number,
  ): { items: HotMessage[]; count: number };
  /** The agent session a CLI session's hooks surfaced into, as the journal recorded (MailIndex). */
  agentSessionOf(identity: string, cliSession: string): string | undefined;
  /** Ids of the identity's waiting handoffs already seen in a session (MailIndex). */
  seenIn(identity: string, session: string): string[];
  commit(events: BusEvent[]): Promise<void>;
  sessions: SessionRegistry;
  /** Types a wake into an idle session's terminal, for CLIs with no wake of their own. */
  waking?: Waking;
  node: string;
  log(line: string): void;
  now(): number;
}

/** The agent CLI behind an MCP client name (its initialize's clientInfo.name). */
function cliOfClient(client: string): HookCli | undefined {
  if (client === 'codex-mcp-client') return 'codex';
  if (client === 'gemini-cli-mcp-client') return 'gemini';
  if (client === 'copilot') return 'vscode'; // the editor's MCP provider names its bridge so
  return undefined;
}

const paneOf = (t: HookTerminal) => `${t.socket} ${t.pane}`;

const wakeTarget = (hs: HookSession): WakeTarget => ({
  key: hs.key,
  identity: hs.identity,
  cli: hs.cli,
  terminal: hs.terminal,
  agentPid: hs.agent?.pid,
  ancestors: hs.ancestors,
});

const nothing = (session: string): Claim => ({
  answer: { items: [], more: 0, session },
  settle: () => Promise.resolve(),
});

export class Attention {
  /**
   * Hook sessions by key, and by identity for the sends that ask about a recipient's. One not heard
   * from for STALE_MS goes (with an idle waiter it is heard from until the wait ends).
   */
  readonly hooked: ExpiringMap<string, HookSession, string>;
  /** Session → the ids handed out to it and not settled: two racing hooks never surface one twice. */
  private readonly claims = new Map<string, Set<string>>();
  /**
   * A CLI's own session (`claude:<id>`) → the agent MCP session its hooks surface into (itself when
   * none is known). A hook that runs before its agent's bridge is live (the CLI connects MCP
   * servers while its first turn runs; a hub restarted under it) still surfaces into that session.
   */
  readonly agentSessions: ExpiringMap<string, { key: string }>;
  /**
   * A tmux pane runs one CLI: the session that last said it runs there is the one woken in it
   * (`socket pane` → session key). A CLI's hooks before its bridge was live, and the bridge, are
   * two sessions of one pane: both woken, two lines were typed.
   */
  private readonly paneOwners = new Map<string, string>();

  constructor(private readonly deps: AttentionDeps) {
    this.hooked = new ExpiringMap(STALE_MS, deps.now, { held: (hs) => !!hs.waiter, groupOf: (hs) => hs.identity });
    this.agentSessions = new ExpiringMap(STALE_MS, deps.now);
  }

  /**
   * The surfacing session: the agent's MCP session whose agent process the hook runs under, the
   * nearest such ancestor (a CLI started inside another agent's shell is its own). A hook under
   * another identity's agent is refused, whether or not the identity it names is live: its output
   * goes into that agent's model, not the named one's. A hook under no live agent keeps a session
   * of its own (a CLI whose bridge is not connected yet, or whose ancestry it cannot read), and its
   * surfacings say so.
   */
  private async sessionKey(h: HookHello, cliSession: string): Promise<{ key: string; underNoAgent?: true }> {
    const under = nearestAgent(h.ancestors, this.deps.sessions.all());
    const own = under.find((s) => s.identity === h.identity);
    if (own) {
      await this.join(h.identity, cliSession, own.key);
      return { key: own.key };
    }
    // Under another identity's agent: not its to surface, live or not (nothing is recorded).
    if (under.length > 0) {
      const whose = [...new Set(under.map((s) => s.identity))].join(', ');
      throw new BusError(
        'not_your_channel',
        `This hook runs under the agent session of ${whose}, not ${h.identity}: it surfaces only that session's handoffs. Nothing was surfaced.`,
      );
    }
    // Its agent's session is not live (yet, or while its bridge reconnects): the one it ran under before, as the journal tells after a restart.
    const key = this.agentSessions.use(cliSession, () => ({
      key: this.deps.agentSessionOf(h.identity, cliSession) ?? cliSession,
    })).key;
    return { key, underNoAgent: true };
  }

  /**
   * The CLI session's hooks surface into the agent's MCP session from now on; what they surfaced
   * before, under the CLI's own key, is recorded for that session too, so it is not handed again.
   */
  private async join(identity: string, cliSession: string, key: string): Promise<void> {
    const known = this.agentSessions.use(cliSession, () => ({ key: cliSession }));
    if (known.key === key) return;
    const before = known.key;
    known.key = key; // a racing hook does not record the same again
    try {
      await this.recordJoin(identity, cliSession, key);
    } catch (e) {
      if (known.key === key) known.key = before; // not recorded: the next hook records it
      throw e;
    }
  }

  private async recordJoin(identity: string, cliSession: string, key: string): Promise<void> {
    const earlier = this.deps.seenIn(identity, cliSession);
    if (earlier.length === 0) return;
    const at = this.deps.now();
    const events = this.deps.page(identity, new Set(earlier)).flatMap((hot) => {
      const seen = hot.deliveries[identity]?.surfacings ?? [];
      const before = seen.find((s) => s.session === cliSession);
      return before && !seen.some((s) => s.session === key)
        ? [
            surfacedEvent(hot, identity, {
              session: key,
              node: this.deps.node,
              at,
              path: before.path,
              via: before.via,
              cliSession,
              ...(before.underNoAgent ? { underNoAgent: true as const } : {}),
              ...(before.stated ? { stated: true as const } : {}),
            }),
          ]
        : [];
    });
    if (events.length > 0) await this.deps.commit(events);
  }

  /** `stated`: the hub could not read the hook's ancestry from the kernel, and its surfacings say so. */
  async hook(h: HookHello, onClose: (cancel: () => void) => void, stated = false): Promise<Claim> {
    const cliSession = `${h.cli}:${h.session}`;
    const { key, underNoAgent } = await this.sessionKey(h, cliSession);
    const hs = this.hooked.use(key, () => ({ key, identity: h.identity, cli: h.cli, busy: false }));
    const pane = typablePane(h.terminal);
    if (pane) hs.terminal = pane;
    this.ownPane(hs);
    hs.ancestors = h.ancestors;
    // Only a live session says which process is the agent: the hook's own pid is gone in a moment.
    const agentPid = this.deps.sessions.get(key)?.agentPid;
    if (agentPid !== undefined && hs.agent?.pid !== agentPid) hs.agent = markProcess(agentPid);
    hs.wakeToken = undefined;
    if (h.phase === 'wait') return this.wait(hs, h, onClose);
    if (h.phase === 'prompt' || h.phase === 'tool') {
      hs.busy = true;
      this.deps.waking?.busy(key);
    }
    const claim = this.claim(
      h.identity,
      key,
      'hook',
      `${h.cli} ${h.event}`,
      undefined,
      key === cliSession ? undefined : cliSession,
      { underNoAgent, stated: stated || undefined },
    );
    // A turn ends unless the stop hook hands the model something new; the idle waiter may then answer.
    if (h.phase === 'stop' || h.phase === 'start') hs.busy = h.phase === 'stop' && claim.answer.items.length > 0;
    if (!hs.busy) {
      this.deps.waking?.rested(hs);
      this.wake(hs);
    }
    return Promise.resolve(claim);
  }

  /** Handoffs a tool result shows: journaled at once, since the result goes out with them. */
  async surfaceInTool(identity: string, session: string, via: string, ids: Set<string>): Promise<void> {
    await this.claim(identity, session, 'tool_result', via, ids).settle(true);
  }

  /** What has not surfaced in `session` (and is not claimed), as an answer and its pending record. */
  private claim(
    identity: string,
    session: string,
    path: SurfacePath,
    via: string,
    only?: Set<string>,
    cliSession?: string,
    marks: { underNoAgent?: true; stated?: true } = {},
  ): Claim {
    const claimed = this.claims.get(session) ?? new Set<string>();
    const open = only
      ? unsurfacedFor(this.deps.page(identity, only), identity, session, (id) => claimed.has(id))
      : undefined;
    const { items: candidates, count } = open
      ? { items: open, count: open.length }
      : this.deps.unsurfaced(identity, session, claimed, Math.ceil(ITEMS_BYTES / LEAST_ITEM_BYTES));
    // Oldest first while they fit the budget; a tool result's page (`only`) is shown whole already.
    const rendered = only ? candidates.map((hot) => ({ hot, text: '' })) : fitting(candidates, identity, ITEMS_BYTES);
    const take = rendered.map((r) => r.hot);
    if (take.length === 0) return nothing(session);
    const at = this.deps.now();
    const stated = marks.stated || unprovenSession(this.deps.sessions.get(session));
    const events = take.map((hot) =>
      surfacedEvent(hot, identity, {
        session,
        node: this.deps.node,
        at,
        path,
        via,
        ...(cliSession ? { cliSession } : {}),
        ...(marks.underNoAgent ? { underNoAgent: true as const } : {}),
        ...(stated ? { stated: true as const } : {}),
      }),
    );
    const ids = take.map((hot) => hot.message.id);
    this.claims.set(session, claimed);
    for (const id of ids) claimed.add(id);
    const items: HookItem[] = rendered.map(({ hot, text }, i) => {
      const replayed = events[i].surfacing.replayed;
      return { id: hot.message.id, from: hot.message.from, text, replayed };
    });
    let settled = false;
    return {
      answer: { items, more: count - take.length, session },
      settle: async (delivered) => {
        if (settled) return;
        settled = true;
        try {
          if (delivered) await this.deps.commit(events);
        } finally {
          for (const id of ids) claimed.delete(id);
          if (claimed.size === 0 && this.claims.get(session) === claimed) this.claims.delete(session);
        }
      },
    };
  }

  /** Holds an idle waiter until mail for its identity arrives while the session is idle. */
  private wait(hs: HookSession, h: HookHello, onClose: (cancel: () => void) => void): Promise<Claim> {
    if (hs.waiter) hs.waiter.answer(nothing(hs.key)); // one waiter per session: the newer replaces it
    return new Promise((resolve) => {
      const done = (c: Claim) => {
        if (hs.waiter?.answer !== done) return void c.settle(false);
        clearTimeout(hs.waiter.timer);
        hs.waiter = undefined;
        this.hooked.touch(hs.key);
        resolve(c);
      };
      hs.waiter = {
        answer: done,
        timer: setTimeout(() => done(nothing(hs.key)), Math.min(h.waitMs ?? 600_000, 3_600_000)),
      };
      onClose(() => done(nothing(hs.key)));
      if (!hs.busy) this.wake(hs);
    });
  }

  private wake(hs: HookSession): void {
    if (hs.busy) return;
    if (!hs.waiter) return this.typeWake(hs);
    const claim = this.claim(hs.identity, hs.key, 'hook', `${hs.cli} idle wake`);
    if (claim.answer.items.length === 0) return;
    hs.busy = true; // the woken model starts a turn
    hs.waiter.answer(claim);
  }

  /**
   * An agent's MCP session came up in a tmux pane, or with its agent's pid (an editor's terminal
   * may run it): until a hook says otherwise it sits at its prompt. Codex runs no hook before its
   * first turn, so without this a fresh session could not be woken; the hooks that run later key on
   * the same session (their process ancestry).
   */
  attached(said: { key: string; identity: string; client: string; terminal?: HookTerminal; agentPid?: number }): void {
    const s = { ...said, terminal: typablePane(said.terminal) };
    const cli = cliOfClient(s.client);
    if (!cli || (!s.terminal && !s.agentPid)) return;
    let fresh = false;
    const agent = s.agentPid !== undefined ? markProcess(s.agentPid) : undefined;
    const hs = this.hooked.use(s.key, () => {
      fresh = true;
      return { key: s.key, identity: s.identity, cli, busy: false, terminal: s.terminal, agent };
    });
    // Its hooks have said where it is. (After a hub restart a CLI mid-turn is marked idle here, but
    // its pane never holds still, so no rest look is taken and nothing is typed until its turn ends.)
    if (!fresh) {
      hs.agent = agent ?? hs.agent;
      hs.terminal = s.terminal ?? hs.terminal;
      this.ownPane(hs);
      return;
    }
    this.ownPane(hs);
    this.deps.waking?.rested({ key: hs.key, identity: hs.identity, cli, terminal: s.terminal });
    this.wake(hs);
  }

  /**
   * The agent's MCP session is gone: nothing is typed into the terminal it ran in (whatever runs
   * there now). A session with an idle waiter keeps it (a hook still connected answers it), but not
   * where it ran.
   */
  detached(key: string): void {
    this.deps.waking?.busy(key);
    const hs = this.hooked.get(key);
    const pane = hs?.terminal && paneOf(hs.terminal);
    if (pane && this.paneOwners.get(pane) === key) this.paneOwners.delete(pane);
    if (!hs?.waiter) return this.hooked.delete(key);
    hs.agent = undefined;
    hs.terminal = undefined;
  }

  private ownPane(hs: HookSession): void {
    if (hs.terminal) this.paneOwners.set(paneOf(hs.terminal), hs.key);
  }

  /** Whether another session said since that it runs in this one's pane: then this one is not woken there. */
  private paneTaken(hs: HookSession): boolean {
    return !!hs.terminal && this.paneOwners.get(paneOf(hs.terminal)) !== hs.key;
  }

  /** Whether its agent process is known to have exited (or its pid to be another's now); then it is dropped. */
  private gone(hs: HookSession): boolean {
    if (!hs.agent || stillRuns(hs.agent)) return false;
    this.deps.log(`${hs.identity}'s agent process ${hs.agent.pid} has exited: its terminal is not woken`);
    this.detached(hs.key);
    return true;
  }

  /** No waiter to answer: an idle session in a terminal the hub or an editor can type into is woken there. */
  private typeWake(hs: HookSession): void {
    const { waking } = this.deps;
    if (!waking || !(hs.terminal || hs.agent) || this.gone(hs) || this.paneTaken(hs)) return;
    const token = {};
    const begin: Begin = () => {
      if (hs.busy || hs.waiter || this.gone(hs) || this.paneTaken(hs)) return false;
      hs.busy = true; // the woken CLI starts a turn
      hs.wakeToken = token;
      return true;
    };
    // Nothing was typed after all: idle again, unless a hook has spoken since.
    begin.undo = () => {
      if (hs.wakeToken !== token) return;
      hs.busy = false;
      hs.wakeToken = undefined;
    };
    void waking.nudge(wakeTarget(hs), begin);
  }

  /** New mail for these identities: idle waiters answer now. */
  arrived(identities: Iterable<string>): void {
    for (const identity of new Set(identities)) for (const hs of this.hooked.group(identity)) this.wake(hs);
  }

  /** The best the recipient's hooked sessions promise, for the sender's answer. */
  seenWhen(identity: string): SeenWhen {
    let best: SeenWhen = 'when_it_calls_inbox';
    const order: SeenWhen[] = ['when_it_calls_inbox', 'next_turn', 'next_tool_call', 'now'];
    for (const hs of [...this.hooked.group(identity)]) {
      if (this.gone(hs)) continue;
      const wakes = hs.waiter || (!this.paneTaken(hs) && this.deps.waking?.wakes(wakeTarget(hs)));
      const here: SeenWhen = hs.busy ? 'next_tool_call' : wakes ? 'now' : 'next_turn';
      if (order.indexOf(here) > order.indexOf(best)) best = here;
    }
    return best;
  }
}

/**
 * A live bridge session whose process the hub did not prove: no /proc on this machine, or a bridge
 * that offered no proof (one started from a build before the proof, still running after an update).
 * Its agent process is as its hello stated it, so what surfaces in it — by tool, or by a hook
 * matched to it through that process — is marked stated. Proven on Linux, never marked.
 */
export function unprovenSession(session: { readonly ancestry?: readonly number[] } | undefined): boolean {
  return session !== undefined && session.ancestry === undefined;
}

/**
 * The oldest of `mail` whose renderings fit `budget` bytes together, each body cut to BODY_BYTES;
 * the first always goes (a body so cut, its header and fence are well under the budget).
 */
function fitting(mail: HotMessage[], identity: string, budget: number): { hot: HotMessage; text: string }[] {
  const out: { hot: HotMessage; text: string }[] = [];
  let left = budget;
  for (const hot of mail) {
    const replayed = (hot.deliveries[identity].surfacings?.length ?? 0) > 0; // as surfacedEvent marks it
    const text = renderCut(hot, replayed);
    const bytes = Buffer.byteLength(text) + 2; // and the blank line between two
    if (out.length > 0 && bytes > left) break;
    out.push({ hot, text });
    left -= bytes;
  }
  return out;
}

/** The handoff as the hook shows it, its body cut to BODY_BYTES (at a character's end) with where the rest is. */
function renderCut(hot: HotMessage, replayed: boolean): string {
  const m = withBody(hot.message);
  const whole = Buffer.from(m.body);
  const kind = replayed ? 'replayed' : undefined;
  if (whole.length <= BODY_BYTES) return renderMessage(m, kind);
  const kept = new TextDecoder().decode(whole.subarray(0, BODY_BYTES)).replace(/\uFFFD$/, '');
  const rest = whole.length - Buffer.byteLength(kept);
  return renderMessage(
    { ...m, body: `${kept}\n[… ${rest} more bytes: get_message("${m.id}") has the whole body]` },
    kind,
  );
}

// The agent's MCP session, kept whole across hubs. The client (Claude Code, Codex, Gemini CLI)
// speaks to the bridge; the bridge speaks to whichever hub serves the workspace now. When the hub
// is not there yet, or goes away, the bridge waits for the next one, greets it with the same
// session key, does the MCP handshake on the client's behalf and resumes: requests made in the gap
// wait (bounded) and then fail with a retryable error; requests a lost hub never answered are sent
// again — a send with the resend key that makes it land once, the others being reads or receipts.
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { MAX_LINE_BYTES, RESEND_META, SESSION_REPLACED } from '../protocol/mcp';
import { LineBuffer } from '../shared/lines';
import { catalogAnswer, initializeResult, unavailable } from './standIn';
import { isNotification, isRequest, isResponse, parse, type Id, type Message } from './wire';

/** Ids of the bridge's own requests to a hub: no client uses them. */
const OWN = 'handoff-bridge:';

export interface Connected {
  socket: Socket;
  /** Bytes the hub sent after its hello reply. */
  rest: Buffer;
  path: string;
}

/** A name the agent took with `whoami` on a bridge started without one: every next hub is told it. */
export interface Registered {
  identity: string;
  roles?: string[];
}

export interface BridgeOptions {
  /** Greets a hub for the workspace (trying each place it may be), as a reconnect when `resume`. */
  connect(resume: boolean, registered?: Registered): Promise<Connected>;
  /** To the client (stdout), one line each. */
  write(line: string): void;
  log(line: string): void;
  /** What a request is told when no hub answered within `gapMs`: says where the bridge looks. */
  noHub(everConnected: boolean, waitedMs: number): string;
  /** How long a request waits for a hub. */
  gapMs: number;
  /** Between two tries to find a hub. */
  retryMs: number;
  /** Bytes written to the client and not yet taken by it (stdout's queue). */
  clientBacklog?: () => number;
}

/**
 * What the client may leave untaken before the bridge stops reading the hub: a CLI suspended
 * with ^Z must not make the bridge hold every push the hub sends meanwhile. The hub then closes
 * the connection at its own bound, and the bridge reconnects once the client has taken it all.
 */
export const MAX_CLIENT_BACKLOG_BYTES = 4 * 1024 * 1024;

interface Waiting {
  message: Message;
  timer?: NodeJS.Timeout;
  /** When it stops waiting: set once, so a hub that comes and goes cannot keep it waiting for ever. */
  deadline?: number;
  /** A request a lost hub had received: it may have run there. It is sent again once, no more. */
  resent: boolean;
}

interface Hub {
  socket: Socket;
  generation: number;
  handshaking: boolean;
  /** It answered the initialize the bridge sent for the client. */
  initialized: boolean;
  live: boolean;
}

/** How long a client's initialize waits for the first hub, when one may be there. */
const FIRST_HUB_WAIT_MS = 5000;
/** The longest wait between tries while hubs refuse the handshake: asking again changes nothing soon. */
const REFUSED_MAX_MS = 30_000;

export class Bridge {
  private initParams?: Record<string, unknown>;
  private initResult?: object;
  private clientReady = false;
  /** The client's initialize answer, held until the first hub has its name (or is known absent). */
  private heldInit?: () => void;
  private firstTryDone = false;
  /** Another bridge took this session key over: this one stops looking for hubs. */
  private replaced?: string;
  private registered?: Registered;
  /** Resource URIs the client subscribed to, subscribed again on each next hub. */
  private readonly subscriptions = new Set<string>();
  /** In flight: what a whoami with a name, a subscribe or an unsubscribe will change once answered. */
  private readonly pendingState = new Map<Id, () => void>();
  private hub?: Hub;
  private generation = 0;
  private everConnected = false;
  private connecting = false;
  /** Said once per gap, not at every try. */
  private saidWaiting = false;
  /** Handshakes refused in a row: each doubles the wait before the next try. */
  private refusals = 0;
  private closed = false;
  /** Client requests waiting for a live hub, in the order they came. */
  private readonly waiting: Waiting[] = [];
  /** Client requests the current hub has and has not answered. */
  private readonly inFlight = new Map<Id, Waiting>();
  /** Requests from a hub to the client (heartbeat pings): only that hub's connection may get the answer. */
  private readonly hubRequests = new Map<Id, number>();
  private readonly own = new Map<string, (m: Message) => void>();
  private ownSeq = 0;
  /** Resend keys are this process's own: another bridge with the same session key never makes one alike. */
  private readonly nonce = randomUUID();
  private sends = 0;
  /** The tools the client was last given, to tell it when a hub's differ. */
  private servedTools?: string;
  private readonly toolLists = new Set<Id>();
  private input = new LineBuffer(MAX_LINE_BYTES);
  /** The client is not taking what it is sent: the hub is not read, and no next hub is looked for. */
  private stalled = false;

  constructor(private readonly options: BridgeOptions) {}

  /**
   * Looks for a hub at once, before the client's handshake: its hello records the agent's name,
   * so peers can address it while the CLI is still starting up.
   */
  start(): void {
    void this.find();
  }

  /** The client's bytes (stdin). */
  fromClient(chunk: Buffer): void {
    const lines = this.input.lines(chunk);
    if (this.input.overLimit) {
      this.options.log(`a line from the client was over ${MAX_LINE_BYTES} bytes; dropped`);
      this.input = new LineBuffer(MAX_LINE_BYTES);
    }
    for (const line of lines) if (line.trim()) this.clientMessage(line);
  }

  /** The client closed stdin: nothing more to carry; `done` once what was written has left. */
  close(done?: () => void): void {
    this.closed = true;
    if (this.hub) this.hub.socket.end(done);
    else done?.();
  }

  private clientMessage(line: string): void {
    const m = parse(line);
    if (!m)
      return this.toClient({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error: one JSON-RPC object per line' },
      });
    if (isRequest(m)) return this.clientRequest(m);
    if (isResponse(m)) {
      // A hub's heartbeat answered: only to the hub that asked.
      const generation = this.hubRequests.get(m.id as Id);
      this.hubRequests.delete(m.id as Id);
      if (generation !== undefined && this.hub?.live && this.hub.generation === generation) this.toHub(m);
      return;
    }
    if (!isNotification(m)) return;
    if (m.method === 'notifications/initialized') {
      this.clientReady = true;
      if (this.hub?.initialized && !this.hub.live) this.goLive(this.hub);
      return;
    }
    if (m.method === 'notifications/cancelled') this.cancel(m.params?.requestId as Id);
    if (this.hub?.live) this.toHub(m);
  }

  private clientRequest(m: Message): void {
    if (m.method === 'initialize') {
      // One session: a second initialize gets the first answer, unchanged.
      this.initParams ??= m.params ?? {};
      this.initResult ??= initializeResult(this.initParams.protocolVersion);
      const answer = () => this.toClient({ jsonrpc: '2.0', id: m.id, result: this.initResult });
      // With a hub about, the client's session starts once the hub knows the agent: a peer that
      // sees it start can address it at once. With none (or a stalled one) it starts anyway.
      if (this.firstTryDone) return answer();
      this.heldInit = answer;
      setTimeout(() => this.releaseInit(), FIRST_HUB_WAIT_MS).unref();
      if (this.hub) this.handshake(this.hub);
      return;
    }
    if (m.method === 'ping') return this.toClient({ jsonrpc: '2.0', id: m.id, result: {} });
    if (this.replaced) return this.toClient(unavailable(m, this.replaced));
    this.noteState(m);
    if (this.hub?.live) return this.forward({ message: this.withResendKey(m), resent: false });
    // A client's discovery must not wait for a hub: the lists are what any hub would answer.
    const listed = catalogAnswer(m);
    if (listed) {
      if (m.method === 'tools/list') this.servedTools = JSON.stringify((listed.result as { tools: unknown }).tools);
      return this.toClient(listed);
    }
    this.wait({ message: this.withResendKey(m), resent: false });
  }

  /** A send carries a key of the bridge's, so sending it again after a lost hub lands it once. */
  private withResendKey(m: Message): Message {
    if (m.method !== 'tools/call' || (m.params as { name?: unknown } | undefined)?.name !== 'send_handoff') return m;
    const params = m.params as { _meta?: Record<string, unknown> };
    return { ...m, params: { ...params, _meta: { ...params._meta, [RESEND_META]: `${this.nonce}:${++this.sends}` } } };
  }

  /**
   * What the session is beyond its key, kept for the next hub: the name a `whoami` took (on a
   * bridge started without one) and the resources subscribed to — recorded once the hub agrees.
   */
  private noteState(m: Message): void {
    const p = m.params as
      { name?: unknown; arguments?: { name?: unknown; roles?: unknown }; uri?: unknown } | undefined;
    const id = m.id as Id;
    if (m.method === 'tools/call' && p?.name === 'whoami' && typeof p.arguments?.name === 'string') {
      const registered = {
        identity: p.arguments.name,
        roles: Array.isArray(p.arguments.roles) ? (p.arguments.roles as string[]) : undefined,
      };
      this.pendingState.set(id, () => (this.registered = registered));
    } else if (
      (m.method === 'resources/subscribe' || m.method === 'resources/unsubscribe') &&
      typeof p?.uri === 'string'
    ) {
      const uri = p.uri;
      this.pendingState.set(id, () =>
        m.method === 'resources/subscribe' ? this.subscriptions.add(uri) : this.subscriptions.delete(uri),
      );
    }
  }

  private wait(w: Waiting): void {
    w.deadline ??= Date.now() + this.options.gapMs;
    const waitedMs = this.options.gapMs - (w.deadline - Date.now());
    w.timer = setTimeout(
      () => {
        const i = this.waiting.indexOf(w);
        if (i < 0) return;
        this.waiting.splice(i, 1);
        this.fail(w, this.options.noHub(this.everConnected, Math.max(waitedMs, this.options.gapMs)));
      },
      Math.max(0, w.deadline - Date.now()),
    );
    this.waiting.push(w);
  }

  private fail(w: Waiting, why: string): void {
    this.pendingState.delete(w.message.id as Id);
    this.toClient(
      unavailable(
        w.message,
        w.resent
          ? `${why} The hub that had this call went away before answering, so it may or may not have taken effect: check (inbox, pending, get_receipts) before repeating it.`
          : why,
      ),
    );
  }

  /** A cancelled request is forgotten wherever it is: the client wants no answer, and no hub gets it again. */
  private cancel(id: Id | undefined): void {
    if (id === undefined) return;
    const i = this.waiting.findIndex((w) => w.message.id === id);
    if (i >= 0) {
      clearTimeout(this.waiting[i].timer);
      this.waiting.splice(i, 1);
    }
    this.inFlight.delete(id);
    this.toolLists.delete(id);
    this.pendingState.delete(id);
  }

  private forward(w: Waiting): void {
    clearTimeout(w.timer);
    w.deadline = undefined; // a hub has it: if that hub goes, it waits anew, once
    this.inFlight.set(w.message.id as Id, w);
    if (w.message.method === 'tools/list') this.toolLists.add(w.message.id as Id);
    this.toHub(w.message);
  }

  private releaseInit(): void {
    this.firstTryDone = true;
    const answer = this.heldInit;
    this.heldInit = undefined;
    answer?.();
  }

  /** The client took what it was sent (stdout drained): the hub is read again. */
  clientDrained(): void {
    if (!this.stalled || this.backlog() > MAX_CLIENT_BACKLOG_BYTES) return;
    this.stalled = false;
    if (this.hub) this.hub.socket.resume();
    else void this.find();
  }

  private backlog(): number {
    return this.options.clientBacklog?.() ?? 0;
  }

  private async find(): Promise<void> {
    if (this.connecting || this.hub || this.closed || this.replaced || this.stalled) return;
    this.connecting = true;
    try {
      const c = await this.options.connect(this.everConnected, this.registered);
      if (this.closed) return void c.socket.destroy();
      this.attach(c);
    } catch (e) {
      this.releaseInit();
      if (!this.saidWaiting)
        this.options.log(`no hub for the workspace yet (${(e as Error).message}); waiting for one`);
      this.saidWaiting = true;
      setTimeout(() => void this.find(), this.options.retryMs).unref();
    } finally {
      this.connecting = false;
    }
  }

  private attach(c: Connected): void {
    const hub: Hub = {
      socket: c.socket,
      generation: ++this.generation,
      handshaking: false,
      initialized: false,
      live: false,
    };
    this.hub = hub;
    const lines = new LineBuffer(MAX_LINE_BYTES);
    const onData = (chunk: Buffer) => {
      const got = lines.lines(chunk);
      if (lines.overLimit) return void c.socket.destroy();
      for (const line of got) {
        const m = parse(line);
        if (m && this.hub === hub) this.hubMessage(hub, m);
      }
    };
    c.socket.on('data', onData);
    c.socket.on('error', () => undefined);
    c.socket.on('close', () => this.lost(hub));
    if (c.rest.length) onData(c.rest);
    c.socket.resume();
    this.options.log(`connected to the hub at ${c.path}`);
    this.saidWaiting = false;
    if (this.initParams) this.handshake(hub);
  }

  /** Initialises the hub's side of the session with the client's own initialize; live once the client is too. */
  private handshake(hub: Hub): void {
    if (hub.handshaking || !this.initParams) return;
    hub.handshaking = true;
    const timer = setTimeout(() => hub.socket.destroy(), 10_000);
    this.ask(hub, 'initialize', this.initParams, (answer) => {
      clearTimeout(timer);
      if (answer.error) {
        this.refusals++;
        this.options.log(
          `the hub refused the MCP handshake: ${JSON.stringify(answer.error).slice(0, 300)}; trying again in ${this.nextTryMs()} ms`,
        );
        return void hub.socket.destroy();
      }
      this.refusals = 0;
      hub.initialized = true;
      this.releaseInit();
      if (this.clientReady) this.goLive(hub);
    });
  }

  /** Both sides initialised: the session resumes on this hub. */
  private goLive(hub: Hub): void {
    this.toHub({ jsonrpc: '2.0', method: 'notifications/initialized' });
    hub.live = true;
    this.everConnected = true;
    for (const uri of this.subscriptions) this.ask(hub, 'resources/subscribe', { uri }, () => undefined);
    for (const w of this.waiting.splice(0)) this.forward(w);
    if (this.servedTools !== undefined) this.ask(hub, 'tools/list', {}, (list) => this.compareTools(list));
  }

  private compareTools(list: Message): void {
    const tools = (list.result as { tools?: unknown } | undefined)?.tools;
    if (!tools || JSON.stringify(tools) === this.servedTools) return;
    this.servedTools = JSON.stringify(tools);
    this.toClient({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  private ask(hub: Hub, method: string, params: Record<string, unknown>, answered: (m: Message) => void): void {
    const id = `${OWN}${randomUUID().slice(0, 8)}:${++this.ownSeq}`;
    this.own.set(id, answered);
    hub.socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  }

  private hubMessage(hub: Hub, m: Message): void {
    if (isResponse(m)) {
      const id = m.id as Id;
      const own = typeof id === 'string' ? this.own.get(id) : undefined;
      if (own) {
        this.own.delete(id as string);
        return own(m);
      }
      if (!this.inFlight.delete(id)) return; // nothing of ours: never answer twice
      if (this.toolLists.delete(id))
        this.servedTools = JSON.stringify((m.result as { tools?: unknown } | undefined)?.tools);
      const noted = this.pendingState.get(id);
      this.pendingState.delete(id);
      if (noted && !m.error && !(m.result as { isError?: boolean } | undefined)?.isError) noted();
      return this.toClient(m);
    }
    if (m.method === SESSION_REPLACED) {
      this.replaced = `This Handoff session was taken over by another process with the same session key (${String(m.params?.reason ?? 'replaced')}). This server stops here: give each agent its own HANDOFF_SESSION (or none), and restart this one if it should stay on the bus.`;
      return;
    }
    if (!hub.live) return; // nothing reaches the client before its session is resumed
    if (isRequest(m)) this.hubRequests.set(m.id as Id, hub.generation);
    this.toClient(m);
  }

  private lost(hub: Hub): void {
    if (this.hub !== hub) return;
    this.hub = undefined;
    this.own.clear();
    this.toolLists.clear();
    this.hubRequests.clear(); // that hub's heartbeats: no other hub takes their answers
    if (this.closed) return;
    const unanswered = [...this.inFlight.values()];
    this.inFlight.clear();
    const waiting = this.waiting.splice(0);
    for (const w of waiting) clearTimeout(w.timer);
    if (this.replaced) {
      this.options.log(this.replaced);
      for (const w of [...unanswered, ...waiting]) this.fail(w, this.replaced);
      return;
    }
    this.options.log('the hub went away; waiting for the next one');
    // Unanswered calls go first, in the order they were sent, then what waited already. A call
    // already sent again once is not sent a third time: it may be what brings hubs down.
    for (const w of unanswered) {
      if (w.resent) this.fail(w, 'The hub went away twice while this call was in flight.');
      else this.wait({ ...w, resent: true });
    }
    for (const w of waiting) this.wait(w);
    setTimeout(() => void this.find(), this.nextTryMs()).unref();
  }

  /** Between two tries: `retryMs`, doubled for each handshake refused in a row, up to REFUSED_MAX_MS. */
  private nextTryMs(): number {
    return Math.min(this.options.retryMs * 2 ** this.refusals, REFUSED_MAX_MS);
  }

  private toHub(m: Message): void {
    this.hub?.socket.write(`${JSON.stringify(m)}\n`);
  }

  private toClient(m: Message): void {
    this.options.write(`${JSON.stringify(m)}\n`);
    if (!this.stalled && this.backlog() > MAX_CLIENT_BACKLOG_BYTES) {
      this.stalled = true;
      this.options.log('the client is not reading what it is sent; the hub is not read until it does');
      this.hub?.socket.pause();
    }
  }
}

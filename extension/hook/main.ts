// `handoff hook <cli> <event> --name NAME`: run by an agent CLI on its hook events. It asks the
// hub for this session's handoffs that have not yet entered the model's context and prints them
// in the CLI's own shape. It rides on someone else's hot path, so it is small, bounded in time,
// and silent on every failure: exit 0, no output, the agent goes on.
import type { Socket } from 'node:net';
import { appendFileSync, fstatSync, read } from 'node:fs';
import { challengeOf, proveProcess } from '../shared/proveProcess';
import { HELLO_VERSION } from '../protocol/helloVersion';
import { ancestry } from '../shared/proc';
import { HOOK_ACK, HOOK_CLIS, type HookAnswer, type HookCli, type HookHello } from '../protocol/hook';
import { tmuxTerminal } from '../shared/terminal';
import { LineBuffer } from '../shared/lines';
import { signHello } from '../shared/hubSecret';
import { hubSockets } from '../shared/discovery';
import { isQuiet } from '../shared/quiet';
import { agentNameAt } from '../shared/agentNames';
import { canonical, findWorkspace, workspaceOf } from '../shared/paths';
import { attentionText, hookOutput, PHASES } from './shapes';
import { fromVsCodeAgent } from './vsCodeAgent';

/** Whole budget of a hook on the agent's hot path (after a tool call), hub answer included. */
const BUDGET_MS = 120;
/**
 * The budget of a hook at a turn's start or end: once per turn, and what a wake and the Stop block
 * depend on (a turn end the hub never heard leaves the session busy to it, never woken). On a loaded
 * machine Node's start alone takes 300 ms; with the hub stalled, a turn starts or ends this late.
 */
const TURN_BUDGET_MS = 1000;
/** An idle waiter re-arms at every turn end; this bounds one that outlives its session. */
const WAIT_MS = 50 * 60_000;
const MAX_STDIN = 1 << 20;
/** The hub bounds what one answer carries; past this it is not our hub. */
const MAX_ANSWER_BYTES = 8 << 20;

interface HookInput {
  session_id?: string;
  cwd?: string;
}

function arg(argv: string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

/**
 * Parent processes, nearest first (Linux /proc; elsewhere just our parent). A Linux hub reads them
 * itself once we prove our pid; other hubs take them as stated.
 */
function ancestors(): number[] {
  return process.ppid > 1 ? [process.ppid, ...ancestry(process.ppid, 7)] : [];
}

/**
 * The CLI's JSON on fd 0, read with fs.read rather than process.stdin: the stream machinery behind
 * process.stdin costs a hook more than its whole exchange with the hub. fs.read waits in libuv's
 * pool, so the budget timer still ends a hook whose CLI never closes its stdin.
 */
function readStdin(): Promise<HookInput> {
  return new Promise((resolve) => {
    const parse = (bytes: Buffer) => {
      try {
        const v = JSON.parse(bytes.toString('utf8')) as unknown;
        resolve(v && typeof v === 'object' ? (v as HookInput) : {});
      } catch {
        resolve({});
      }
    };
    try {
      if (fstatSync(0).isCharacterDevice()) return resolve({}); // a terminal: nobody is piping a payload
    } catch {
      return resolve({});
    }
    let buf = Buffer.allocUnsafe(64 * 1024);
    let size = 0;
    const next = () =>
      read(0, buf, size, buf.length - size, null, (e, n) => {
        if (e?.code === 'EAGAIN') return void setTimeout(next, 1); // a non-blocking pipe, not ready yet
        if (e || n === 0) return parse(buf.subarray(0, size));
        size += n;
        if (size > MAX_STDIN) return resolve({});
        if (size === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]);
        next();
      });
    next();
  });
}

interface Asked {
  answer: HookAnswer;
  /** Tells the hub the CLI has the handoffs (it records them as surfaced), then closes. */
  confirm(): Promise<void>;
}

/**
 * One exchange: hello (the request) → hello reply line → (Linux) a challenge, answered with our
 * pid → answer line; `ack` back once printed.
 */
function ask(socketPath: string, hello: HookHello): Promise<Asked | undefined> {
  return new Promise((resolve) => {
    // Loaded here, not at the top: a tool-call hook that finds its identity quiet never needs it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createConnection } = require('node:net') as { createConnection: (path: string) => Socket };
    const signed = signHello(socketPath);
    if (!signed) return resolve(undefined); // no secret where one is needed: no hub of ours, nothing said
    const hubKnows = (line: string): boolean => {
      try {
        return signed.hubKnows(JSON.parse(line) as { hubProof?: unknown });
      } catch {
        return false;
      }
    };
    const socket = createConnection(socketPath);
    const input = new LineBuffer(MAX_ANSWER_BYTES);
    const lines: string[] = [];
    let challenged = false;
    socket.on('connect', () => socket.write(`${JSON.stringify({ ...hello, ...signed.fields })}\n`));
    const onData = (d: Buffer) => {
      lines.push(...input.lines(d));
      if (input.overLimit) {
        socket.destroy();
        return resolve(undefined);
      }
      if (lines.length < 2) return; // the hello reply, then a challenge or the answer
      if (!challenged && !hubKnows(lines[0])) {
        socket.destroy(); // another user's pipe: told nothing, as if no hub were there
        return resolve(undefined);
      }
      let answer: (HookAnswer & { error?: string }) | undefined;
      try {
        answer = JSON.parse(lines[1]) as HookAnswer & { error?: string };
      } catch {
        answer = undefined;
      }
      const challenge = challenged ? undefined : challengeOf(answer);
      if (challenge) {
        challenged = true; // one per exchange: a second is no answer
        lines.splice(1, 1);
        proveProcess(socket, challenge);
        return onData(Buffer.alloc(0));
      }
      socket.off('data', onData);
      if (!answer || !Array.isArray(answer.items)) {
        socket.destroy();
        return resolve(undefined);
      }
      if (answer.items.length === 0) socket.destroy();
      resolve({ answer, confirm: () => new Promise((done) => socket.end(`${HOOK_ACK}\n`, () => done())) });
    };
    socket.on('data', onData);
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => resolve(undefined));
  });
}

/** Writes and resolves once the bytes are handed to the pipe (process.exit may cut a pending write). */
function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve) => stream.write(text, () => resolve()));
}

/**
 * HANDOFF_HOOK_TRACE=FILE appends one JSON line per run (event, wall time since the process
 * started, what it surfaced): how a user, or a test, sees what a hook did on its hot path.
 */
function trace(entry: Record<string, unknown>): void {
  const file = process.env.HANDOFF_HOOK_TRACE;
  if (!file) return;
  try {
    appendFileSync(file, `${JSON.stringify({ ...entry, pid: process.pid, ms: Math.round(performance.now()) })}\n`);
  } catch {
    // a trace must never break the hook
  }
}

export async function runHook(argv: string[]): Promise<number> {
  const [cli, event] = argv as [HookCli, string];
  const pinnedName = arg(argv, '--name') ?? process.env.HANDOFF_AGENT;
  const phase = HOOK_CLIS.includes(cli) ? PHASES[cli][event] : undefined;
  if (!phase) return 0;
  // VS Code's own agent runs the Claude-format hooks of .claude/settings*.json too, with its own
  // payload: those turns are not the Claude Code session's, and nothing is surfaced for them.
  // Claude Code marks every process it starts with CLAUDECODE=1; the payload is checked below.
  // VS Code's Agent Host runs Claude sessions through the Claude Agent SDK's own claude: CLAUDECODE=1,
  // Claude's payload (and AI_AGENT=github_copilot_vscode_agent): they act (test/vscode/agentHost).
  if (cli === 'claude' && process.env.CLAUDECODE !== '1') {
    trace({ cli, event, outcome: 'not claude code' });
    return 0;
  }
  // `claude -p` waits for running async hooks before it exits: a one-shot run has no idle to wake.
  if (phase === 'wait' && process.env.CLAUDE_CODE_ENTRYPOINT !== 'cli') return 0;
  if (phase !== 'wait') {
    setTimeout(
      () => {
        trace({ cli, event, outcome: 'budget' });
        process.exit(0);
      },
      phase === 'tool' ? BUDGET_MS : TURN_BUDGET_MS,
    ).unref();
  }
  const input = await readStdin();
  // A VS Code started from a Claude Code session inherits CLAUDECODE=1: its payload still tells.
  if (cli === 'claude' && fromVsCodeAgent(input)) {
    trace({ cli, event, outcome: 'not claude code', by: 'payload' });
    return 0;
  }
  // The hooks of VS Code's agent act only in its runs (a CLI reading .github/hooks is another agent).
  if (cli === 'vscode' && !fromVsCodeAgent(input)) {
    trace({ cli, event, outcome: 'not vscode agent' });
    return 0;
  }
  const env = arg(argv, '--hub') ? { ...process.env, HANDOFF_HUB: arg(argv, '--hub') } : process.env;
  const cwd = typeof input.cwd === 'string' ? input.cwd : process.cwd();
  // Unpinned (connect in git): the checkout the session runs in names the agent (shared/agentNames.ts).
  const named = pinnedName === undefined ? agentNameAt(cli, canonical(cwd)) : undefined;
  const identity = pinnedName ?? named?.name;
  if (!identity) {
    trace({ cli, event, outcome: 'no name' });
    return 0;
  }
  const pinned = arg(argv, '--workspace');
  // The checkout that named the agent already says its repository: no second walk up the folders.
  const workspace = () => (pinned ? workspaceOf(pinned) : named ? canonical(named.checkout.root) : findWorkspace(cwd));
  // On a tool call, the hook that runs most: the hub's quiet mark says nothing waits (shared/quiet.ts).
  if (phase === 'tool') {
    const first = hubSockets(env, workspace).next();
    if (!first.done && isQuiet(first.value, identity)) {
      trace({ cli, event, outcome: 'quiet' });
      return 0;
    }
  }
  // Where the hub may be is read anew for each try: a restarted hub may listen elsewhere.
  const askHub = async (): Promise<Asked | undefined> => {
    for (const socket of hubSockets(env, workspace)) {
      const asked = await ask(socket, hello);
      if (asked) return asked;
    }
    return undefined;
  };
  const hello: HookHello = {
    handoff: HELLO_VERSION,
    kind: 'hook',
    cli,
    phase,
    event,
    identity,
    session:
      typeof input.session_id === 'string' && input.session_id
        ? input.session_id.slice(0, 200)
        : `ppid-${process.ppid}`,
    ancestors: ancestors(),
    ...(phase === 'wait' ? { waitMs: WAIT_MS } : {}),
  };
  const where = tmuxTerminal(process.env);
  if (where) hello.terminal = where;
  let asked = await askHub();
  // The waiter outlives hub restarts: while no hub answers it asks again, until its own time is up.
  // An empty answer means its time is up or a newer waiter of the session replaced it.
  for (const until = Date.now() + WAIT_MS; phase === 'wait' && !asked && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 2000));
    asked = await askHub();
  }
  const answer = asked?.answer;
  trace({ cli, event, outcome: answer ? 'answered' : 'no hub', ids: answer?.items.map((i) => i.id) ?? [] });
  if (!asked || !answer?.items.length) return 0;
  const text = attentionText(identity, answer, phase === 'stop');
  if (phase === 'wait') {
    await write(process.stderr, `${text}\n`); // asyncRewake: exit 2 with stderr wakes the idle session
    await asked.confirm();
    return 2;
  }
  await write(process.stdout, `${JSON.stringify(hookOutput(cli, event, phase, text))}\n`);
  await asked.confirm();
  return 0;
}

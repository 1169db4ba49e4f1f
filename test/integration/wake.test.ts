// Waking an idle session in tmux, against a real tmux server: the pane runs a stand-in CLI that
// records every line typed into it, so the test counts wakes exactly. The hub types only into a
// session whose turn has ended, once per handoff, never over a draft, and not when the editor's
// setting is off, nor while someone types in the pane's session; the wake is journaled apart from
// `surfaced`, which only a hook writes.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { lookAt, typeLine, type PaneLook } from '../../extension/hub/deliver/wake/tmux';
import type { Pane } from '../../extension/hub/deliver/waking';
import type { HookHello, HookTerminal } from '../../extension/protocol/hook';
import { tmuxAvailable } from '../helpers/cli/tmux';
import { fakeSession } from '../helpers/fakeSession';
import { tempDir } from '../helpers/hubProcess';
import { skipOrFail, whyMissing } from '../helpers/skip.mjs';
import { waitFor, waitUntil } from '../helpers/wait';
import { powers } from '../../extension/shared/platform/powers';

/** A tmux server on its own socket whose one pane runs a stand-in CLI, and a hub that may type into it. */
async function paneAndHub(
  dir: string,
  cleanup: (() => unknown)[],
  options: { wakeQuietMs?: number; pane?: Pane } = {},
) {
  const typed = join(dir, 'typed.txt');
  const cli = join(dir, 'cli.sh');
  const drawing = join(dir, 'draw');
  // A prompt, then each line typed is recorded: what the hub typed, exactly, and how often. Beside
  // it the TUI draws by itself what the test leaves in `draw` (escape sequences and all), as a real
  // one repaints its footer or opens a dialog.
  writeFileSync(
    cli,
    `#!/bin/sh\n(while :; do [ -f '${drawing}' ] && printf '%b' "$(cat '${drawing}')" && rm '${drawing}'; sleep 0.05; done) &\n` +
      `while printf '> ' && IFS= read -r line; do printf '%s\\n' "$line" >> '${typed}'; done\n`,
    {
      mode: 0o755,
    },
  );
  const socket = join(dir, 'tmux.sock');
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  tmux('new-session', '-d', '-s', 'agent', '-x', '120', '-y', '30', cli);
  cleanup.push(() => tmux('kill-server'));
  const terminal: HookTerminal = {
    kind: 'tmux',
    socket,
    pane: tmux('display-message', '-p', '-t', 'agent', '#{pane_id}').trim(),
  };
  const lines = () => (existsSync(typed) ? readFileSync(typed, 'utf8').split('\n').filter(Boolean) : []);
  /** The stand-in TUI draws `what` by itself (no keystroke); resolves once it has. */
  const draw = async (what: string) => {
    writeFileSync(drawing, what);
    await waitUntil(() => !existsSync(drawing), 10_000, 'the TUI drew');
  };

  const logs: string[] = [];
  const hub = new Hub({
    workspace: join(dir, 'ws'),
    storeDir: join(dir, 'store'),
    node: 'wake',
    log: (l) => logs.push(l),
    ...options,
  });
  await hub.start();
  cleanup.push(() => hub.close());
  for (const name of ['alice', 'carol', 'bob']) await hub.remember(name);
  /** A hook of bob's TUI; `shown` false: cut off by its time budget before its CLI printed it. */
  const hook = async (phase: HookHello['phase'], event: string, shown = true) => {
    const claim = await hub.attention.hook(
      {
        handoff: 1,
        kind: 'hook',
        cli: 'codex',
        phase,
        event,
        identity: 'bob',
        session: 'tui-1',
        ancestors: [],
        terminal,
      },
      () => undefined,
    );
    await claim.settle(shown);
    return claim.answer.items.map((i) => i.id);
  };
  const send = async (from: string, body: string) =>
    hub.send({ identity: from, session: `${from}-s`, node: 'wake' }, { to: ['bob'], body });
  const receipts = (id: string) => hub.state.hot[id].deliveries.bob;
  return { tmux, terminal, lines, draw, logs, hub, hook, send, receipts };
}

/**
 * Without tmux (Windows; the no-Linux-powers lane, HANDOFF_POWERS_OFF=tmux) the hub types into no
 * pane a hook states: the sender is told the agent's next turn, nothing is typed or journaled as a
 * wake, its next turn shows the handoff, and the snapshot `handoff status` prints says why.
 */
async function notWoken(p: Awaited<ReturnType<typeof paneAndHub>>): Promise<void> {
  await p.hook('start', 'SessionStart');
  const a = await p.send('alice', 'no tmux here');
  assert.equal(a.recipients[0].seen_when, 'next_turn', 'not promised now');
  await new Promise((r) => setTimeout(r, 1500)); // sleep: proving nothing is typed
  assert.deepEqual(p.lines(), [], 'nothing typed into the pane');
  assert.equal(p.receipts(a.message_id).wakes, undefined, 'no wake journaled');
  assert.ok(
    p.hub.snapshot().weaker?.some((w) => w.startsWith('tmux wake off')),
    'the snapshot says so',
  );
  assert.deepEqual(await p.hook('prompt', 'UserPromptSubmit'), [a.message_id], 'its next turn shows it');
}

describe('waking an idle session in its tmux pane', () => {
  const cleanup: (() => unknown)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it(
    'types one wake per handoff into an idle pane, none while busy, over a draft or when turned off',
    { timeout: 60_000 },
    async (t) => {
      if (!tmuxAvailable()) return skipOrFail(t, whyMissing('setup-agents', 'tmux'));
      if (!powers.tmux) return notWoken(await paneAndHub(tempDir('wake'), cleanup));
      const { tmux, terminal, lines, logs, hub, hook, send, receipts } = await paneAndHub(tempDir('wake'), cleanup);

      // Bob's turn ends: idle, at rest.
      await hook('start', 'SessionStart');
      const a = await send('alice', 'first');
      assert.equal(a.recipients[0].seen_when, 'now', 'an idle session in a pane the hub can type into is woken now');
      await waitFor(() => lines().length === 1, 10_000, 'the wake typed into the pane');
      assert.deepEqual(lines(), ['New handoff from alice — check your Handoff inbox']);
      await waitFor(() => (receipts(a.message_id).wakes?.length ?? 0) === 1, 5000, 'the wake journaled');
      const wake = receipts(a.message_id).wakes![0];
      assert.equal(wake.how, 'tmux');
      assert.equal(wake.terminal, terminal.pane);
      assert.equal(receipts(a.message_id).state, 'queued', 'a wake is not a receipt: nothing surfaced yet');

      // A new session starts in the pane and its hook is cut off before its CLI shows anything: idle
      // again with the first handoff unseen, but it was woken for once, so only the next is named.
      await hook('start', 'SessionStart', false);
      const a2 = await send('carol', 'first and a half');
      await waitFor(() => lines().length === 2, 10_000, 'the wake for the next handoff');
      assert.equal(lines()[1], 'New handoff from carol — check your Handoff inbox');

      // Woken, bob is busy until its turn ends: a handoff now is not typed, its prompt hook shows it.
      const b = await send('alice', 'second, while busy');
      assert.equal(b.recipients[0].seen_when, 'next_tool_call');
      assert.deepEqual(await hook('prompt', 'UserPromptSubmit'), [a.message_id, a2.message_id, b.message_id]);
      assert.equal(receipts(a.message_id).state, 'surfaced', 'the hook that ran wrote surfaced');
      await hook('stop', 'Stop');

      // Idle again: the next handoff wakes it once more, and only that one is named.
      await send('carol', 'third');
      await waitFor(() => lines().length === 3, 10_000, 'the third wake');
      assert.equal(lines()[2], 'New handoff from carol — check your Handoff inbox');
      assert.equal(receipts(b.message_id).wakes, undefined, 'b surfaced while busy: never woken for');
      await hook('prompt', 'UserPromptSubmit');
      await hook('stop', 'Stop');

      // A draft in the prompt: the prompt line is no longer as it was at rest, so nothing is typed.
      await new Promise((r) => setTimeout(r, 1500)); // sleep: the rest look is taken once the pane is still
      tmux('send-keys', '-t', terminal.pane, '-l', 'half a thought');
      const d = await send('alice', 'fourth, over a draft');
      await waitFor(() => logs.some((l) => l.includes('a draft or a dialog')), 10_000, 'the refusal logged');
      assert.equal(lines().length, 3, 'nothing typed over the draft');
      assert.equal(receipts(d.message_id).wakes, undefined);
      tmux('send-keys', '-t', terminal.pane, 'C-u'); // the person clears the draft and prompts: its hook shows it
      assert.deepEqual(await hook('prompt', 'UserPromptSubmit'), [d.message_id]);
      await hook('stop', 'Stop');

      // Turned off in the editor: nothing typed, and the sender is told the truth.
      await hub.roster.reportWindow('win', { identity: 'dave', focused: true, wakeIdleAgents: 'off' });
      const off = await send('alice', 'fifth, wakes off');
      assert.equal(off.recipients[0].seen_when, 'next_turn');
      // Back on: the next arrival wakes it once, for both waiting handoffs; had the fifth been typed, this would be a fifth line.
      await hub.roster.reportWindow('win', { identity: 'dave', focused: true, wakeIdleAgents: 'on' });
      const six = await send('carol', 'sixth');
      await waitFor(() => lines().length === 4, 10_000, 'the wake once turned on');
      assert.equal(lines()[3], 'New handoffs from alice, carol — check your Handoff inbox');
      assert.deepEqual(await hook('prompt', 'UserPromptSubmit'), [off.message_id, six.message_id]);
      assert.equal(lines().length, 4);
    },
  );

  it(
    "types over the TUI's own redraws (a footer repainted, a line above the prompt), not over a dialog in its prompt's place",
    { timeout: 60_000 },
    async (t) => {
      if (!tmuxAvailable()) return skipOrFail(t, whyMissing('setup-agents', 'tmux'));
      if (!powers.tmux) return notWoken(await paneAndHub(tempDir('wake-redraw'), cleanup));
      // Every look the hub takes, so the test knows when the rest look has been taken.
      const looks: PaneLook[] = [];
      const pane: Pane = { lookAt: async (x) => (looks.push(await lookAt(x)), looks.at(-1)!), typeLine };
      const { lines, draw, logs, hook, send, receipts } = await paneAndHub(tempDir('wake-redraw'), cleanup, { pane });
      const atRest = async () => {
        const from = looks.length;
        await waitUntil(
          () => looks.length >= from + 2 && looks.at(-1)!.prompt === looks.at(-2)!.prompt,
          10_000,
          'the rest look',
        );
      };
      const ESC = '\x1b';
      await hook('start', 'SessionStart');
      await atRest();
      // Drawn by the TUI, no key pressed: a footer repainted (the cursor put back), and a notice
      // inserted above the prompt, which moves the prompt a line down.
      await draw(`${ESC}7${ESC}[25;1H1 MCP server · ? for shortcuts${ESC}8`);
      await draw(`${ESC}[1;1H${ESC}[1LUpdate available${ESC}[2;3H`);
      const a = await send('alice', 'over the redraws');
      await waitFor(() => lines().length === 1, 10_000, 'the wake typed over redraws');
      assert.equal(receipts(a.message_id).wakes?.length, 1);
      await hook('prompt', 'UserPromptSubmit');
      await hook('stop', 'Stop');
      await atRest();

      // A dialog the TUI opened in its prompt's place: nothing is typed into it.
      await draw(`${ESC}[2J${ESC}[1;1HAllow the tool to run? [y/n] `);
      const d = await send('alice', 'into a dialog');
      await waitFor(() => logs.some((l) => l.includes('a draft or a dialog')), 10_000, 'the refusal logged');
      assert.equal(lines().length, 1, 'nothing typed into the dialog');
      assert.equal(receipts(d.message_id).wakes, undefined);
    },
  );

  it(
    'waits while someone types in the pane, then types one wake once it has been quiet',
    { timeout: 60_000 },
    async (t) => {
      if (!tmuxAvailable()) return skipOrFail(t, whyMissing('setup-agents', 'tmux'));
      if (!powers.tmux) return notWoken(await paneAndHub(tempDir('wake-input'), cleanup));
      const quietMs = 3000;
      const { tmux, terminal, lines, logs, hook, send, receipts } = await paneAndHub(tempDir('wake-input'), cleanup, {
        wakeQuietMs: quietMs,
      });
      // A person at the pane: a real tmux client attached to its session, on a terminal of its own
      // (script gives it one); what is written to it is typed at the keyboard, and tmux records it
      // as that client's activity.
      const person = spawn('script', ['-qfc', `tmux -S '${terminal.socket}' attach -t agent`, '/dev/null'], {
        env: { ...process.env, TERM: 'xterm' },
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      cleanup.push(() => person.kill());
      await waitUntil(() => tmux('list-clients', '-F', '#{client_name}').trim(), 10_000, 'the person attached');
      const prompt = () => tmux('display-message', '-p', '-t', terminal.pane, '#{cursor_x}').trim();
      await waitUntil(() => prompt() === '2', 10_000, 'the prompt drawn');

      // They type a character and rub it out: the pane looks as before, but someone is at it.
      const typedAt = Date.now();
      person.stdin.write('x');
      await waitUntil(() => prompt() === '3', 10_000, 'the keystroke reached the pane');
      person.stdin.write('\x7f');
      await waitUntil(() => prompt() === '2', 10_000, 'the keystroke rubbed out');

      // Bob's turn ends and a handoff arrives: idle, at rest, no draft, but input is recent.
      await hook('start', 'SessionStart');
      const a = await send('alice', 'while the person types');
      await waitFor(() => logs.some((l) => l.includes('someone typed there lately')), 10_000, 'the wake put off');
      assert.equal(lines().length, 0, 'nothing typed while someone is at the pane');
      assert.equal(receipts(a.message_id).wakes, undefined);

      // Quiet since: one wake, typed only once the quiet time has passed since the keystroke.
      await waitFor(() => lines().length === 1, quietMs + 10_000, 'the wake once the pane went quiet');
      assert.deepEqual(lines(), ['New handoff from alice — check your Handoff inbox']);
      await waitFor(() => (receipts(a.message_id).wakes?.length ?? 0) === 1, 5000, 'the wake journaled');
      const wokenAfter = receipts(a.message_id).wakes![0].at - typedAt;
      assert.ok(wokenAfter >= quietMs, `woken ${wokenAfter} ms after the keystroke, before ${quietMs} ms of quiet`);
      assert.deepEqual(await hook('prompt', 'UserPromptSubmit'), [a.message_id], 'its prompt hook shows it');
      assert.equal(lines().length, 1, 'one wake, not one per try');
    },
  );

  it(
    "one pane, two sessions the hub heard of in it (the CLI's own from a hook before its bridge was live, then its bridge's): one wake typed",
    { timeout: 60_000 },
    async (t) => {
      if (!tmuxAvailable()) return skipOrFail(t, whyMissing('setup-agents', 'tmux'));
      const p = await paneAndHub(tempDir('wake-twice'), cleanup);
      const { terminal, lines, hub, hook, send, receipts } = p;
      if (!powers.tmux) {
        // A bridge that states the pane is not typed into either.
        await hub.attach(fakeSession('bob', 'bob-bridge', { client: 'gemini-cli-mcp-client', terminal }));
        return notWoken(p);
      }
      // Gemini's SessionStart hook runs before its MCP servers connect: a hook session of the CLI's own.
      await hook('start', 'SessionStart');
      // Then its bridge attaches, saying the same pane: the session its hooks surface into from now on.
      await hub.attach(fakeSession('bob', 'bob-bridge', { client: 'gemini-cli-mcp-client', terminal }));
      const a = await send('alice', 'one handoff');
      await waitFor(() => lines().length >= 1, 10_000, 'the wake typed');
      await new Promise((r) => setTimeout(r, 2000)); // sleep: proving no second line follows
      assert.deepEqual(lines(), ['New handoff from alice — check your Handoff inbox']);
      assert.deepEqual(
        receipts(a.message_id).wakes?.map((w) => w.session),
        ['bob-bridge'],
      );
    },
  );
});

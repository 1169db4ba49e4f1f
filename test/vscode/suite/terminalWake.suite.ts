// Waking an idle agent in an integrated terminal of the real VS Code: the terminal runs a stand-in
// Codex (test/vscode/standInCli.mjs: the real bridge, the real hook program, every typed line
// recorded). The hub asks this window, the window finds the terminal by the agent's process
// ancestry and types the line. Counted: one line per handoff; none while the person is at that
// terminal (the active terminal of the focused window), typed once they have left it; none when
// handoff.wakeIdleAgents is off.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HandoffApi } from '../../../extension/client/extension';
import { connectAgent, waitFor, type Agent } from '../../helpers/agent';

const EXTENSION_ID = 'handoff.handoff-bus';
const LINE = 'New handoff from alice — check your Handoff inbox';

interface Entry {
  ready?: number;
  hub?: boolean;
  line?: string;
  turn?: number;
  prompt?: string[];
  done?: boolean;
}

describe('Waking an idle agent in an integrated terminal', () => {
  let api: HandoffApi;
  const disposables: vscode.Disposable[] = [];
  let alice: Agent | undefined;

  before(async () => {
    api = await vscode.extensions.getExtension<HandoffApi>(EXTENSION_ID)!.activate();
    await waitFor(() => api.hubState().kind === 'running', 30_000, 'the hub running');
  });

  after(async () => {
    for (const d of disposables) d.dispose();
    await alice?.close().catch(() => undefined);
    await vscode.workspace
      .getConfiguration('handoff')
      .update('wakeIdleAgents', undefined, vscode.ConfigurationTarget.Global);
  });

  it('types one line per handoff into an idle agent, none while the person is at its terminal or when off', async function () {
    this.timeout(120_000);
    const root = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
    const log = join(mkdtempSync(join(tmpdir(), 'handoff-wake-')), 'cli.log');
    const entries = (): Entry[] =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Entry)
        : [];
    const lines = () => entries().flatMap((e) => (e.line !== undefined ? [e.line] : []));
    const turnsDone = () => entries().filter((e) => e.done).length;

    // The agent's terminal: a shell that runs the stand-in, so the agent is the shell's child.
    const cli = join(root, 'test', 'vscode', 'standInCli.mjs');
    const agentTerminal = vscode.window.createTerminal({
      name: 'codex bob',
      shellPath: '/bin/sh',
      shellArgs: ['-c', `'${process.execPath}' '${cli}' '${root}' '${log}' bob; echo exited`],
    });
    // The person's own terminal, where they work.
    const mine = vscode.window.createTerminal({ name: 'mine', shellPath: '/bin/sh' });
    disposables.push(agentTerminal, mine);
    mine.show();
    await waitFor(() => vscode.window.activeTerminal === mine, 10_000, 'the person at their own terminal');
    assert.ok(vscode.window.state.focused, 'the window has focus (headless Chromium gives the page focus)');
    await waitFor(() => entries().some((e) => e.ready), 30_000, 'the stand-in connected through the bridge');
    assert.equal(entries()[0].hub, true, 'its bridge reached the real hub');

    alice = await connectAgent({ socket: api.location.socket, name: 'alice', session: `alice-wake-${Date.now()}` });
    const send = async (body: string) => {
      const r = await alice!.ok('send_handoff', { to: 'bob', body });
      return { id: r.message_id as string, seenWhen: r.recipients[0].seen_when as string };
    };
    const bobRow = (id: string) =>
      api
        .panelModel()
        .events.find((e) => e.id === id)
        ?.recipients.find((r) => r.identity === 'bob');

    // 1. Idle: one line, typed into its terminal; its prompt hook then shows the handoff to the model.
    const a = await send('first');
    assert.equal(a.seenWhen, 'now', 'an idle session an editor window can wake is woken now');
    await waitFor(
      () => turnsDone() === 1,
      30_000,
      () => `the woken turn: ${JSON.stringify(entries())}`,
    );
    assert.deepEqual(lines(), [LINE]);
    assert.deepEqual(entries().find((e) => e.prompt)?.prompt, [a.id], 'its prompt hook surfaced the handoff');
    await waitFor(
      () => /the editor's integrated terminal "codex bob"/.test(bobRow(a.id)?.detail ?? ''),
      10_000,
      () => `the panel names the terminal: ${JSON.stringify(bobRow(a.id))}`,
    );

    // 2. Idle again after its turn: the next handoff, one more line.
    const b = await send('second');
    await waitFor(() => turnsDone() === 2, 30_000, 'the second woken turn');
    assert.deepEqual(lines(), [LINE, LINE]);
    assert.deepEqual(
      entries()
        .filter((e) => e.prompt)
        .at(-1)?.prompt,
      [b.id],
    );

    // 3. The person is at the agent's terminal: nothing typed while they are; once they leave
    // (and it has been quiet), the hub asks again and the line is typed.
    agentTerminal.show();
    await waitFor(() => vscode.window.activeTerminal === agentTerminal, 10_000, 'the person at the agent terminal');
    const asked = api.terminalWakes().length;
    const c = await send('third, while the person is at its terminal');
    await waitFor(
      () =>
        api
          .terminalWakes()
          .slice(asked)
          .some((w) => !w.answer.woken && /active terminal of the focused window/.test(w.answer.why)),
      10_000,
      () => `the window refusing: ${JSON.stringify(api.terminalWakes().slice(asked))}`,
    );
    assert.deepEqual(lines(), [LINE, LINE], 'nothing typed while the person is at the terminal');
    mine.show();
    await waitFor(() => turnsDone() === 3, 30_000, 'the wake once the person left the terminal');
    assert.deepEqual(lines(), [LINE, LINE, LINE]);
    assert.deepEqual(
      entries()
        .filter((e) => e.prompt)
        .at(-1)?.prompt,
      [c.id],
    );

    // 4. Off: no line, and the sender is told; back on, the next handoff wakes it once for both.
    const config = vscode.workspace.getConfiguration('handoff');
    await config.update('wakeIdleAgents', 'off', vscode.ConfigurationTarget.Global);
    await waitFor(() => api.snapshot()?.wakeIdleAgents === 'off', 10_000, 'the hub told wakes are off');
    const d = await send('fourth, wakes off');
    assert.equal(d.seenWhen, 'next_turn');
    await config.update('wakeIdleAgents', 'on', vscode.ConfigurationTarget.Global);
    await waitFor(() => api.snapshot()?.wakeIdleAgents === 'on', 10_000, 'the hub told wakes are on');
    const e = await send('fifth, wakes on');
    await waitFor(() => turnsDone() === 4, 30_000, 'the wake once turned on');
    // Had the fourth been typed, there would be five lines.
    assert.deepEqual(lines(), [LINE, LINE, LINE, 'New handoffs from alice — check your Handoff inbox']);
    assert.deepEqual(
      entries()
        .filter((x) => x.prompt)
        .at(-1)?.prompt,
      [d.id, e.id],
    );

    // 5. Ask: the person is asked once per handoff; "Not now" (the notification closed) types
    // nothing, "Wake" (the notification's primary action) types the line.
    await config.update('wakeIdleAgents', 'ask', vscode.ConfigurationTarget.Global);
    await waitFor(() => api.snapshot()?.wakeIdleAgents === 'ask', 10_000, 'the hub told wakes are asked for');
    const askedFrom = Date.now();
    const questions = () => api.wakeQuestions().filter((q) => q.at >= askedFrom);
    const f = await send('sixth, declined');
    assert.equal(f.seenWhen, 'next_turn', 'a wake the person may refuse is not promised');
    await waitFor(() => questions().length === 1, 10_000, 'the question');
    assert.match(
      questions()[0].text,
      /is idle with a handoff from alice\. Wake it by typing a line into its editor terminal\?/,
    );
    await vscode.commands.executeCommand('notifications.clearAll');
    await waitFor(() => questions()[0].choice === 'closed', 10_000, 'the question closed');
    const g = await send('seventh, allowed');
    await waitFor(() => questions().length === 2, 10_000, 'a question for the new handoff only');
    assert.match(questions()[1].text, /with a handoff from alice/, 'only the new one');
    await vscode.commands.executeCommand('notification.acceptPrimaryAction');
    await waitFor(() => turnsDone() === 5, 30_000, 'the wake after "Wake"');
    assert.equal(questions()[1].choice, 'Wake');
    assert.equal(lines().length, 5, 'one line for the two asked handoffs, none for "Not now"');
    assert.deepEqual(
      entries()
        .filter((x) => x.prompt)
        .at(-1)?.prompt,
      [f.id, g.id],
      'the turn the wake started shows both (the declined one waited for it)',
    );
  });
});

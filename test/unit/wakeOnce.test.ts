// One wake line per handoff per session, counted where it is typed (hub/deliver/waking.ts): in tmux the
// wake is recorded before it is typed, so a record that fails types nothing and the next arrival
// types it once; a window that answers after the hub stopped waiting may still have typed, so the
// handoff is not asked for again, even when another window comes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BusEvent, HotMessage } from '../../extension/hub/bus/model';
import { EditorTerminals } from '../../extension/hub/deliver/wake/editor';
import type { PaneLook } from '../../extension/hub/deliver/wake/tmux';
import { Waking, type Begin, type WakeTarget } from '../../extension/hub/deliver/waking';
import type { TerminalWakeAnswer } from '../../extension/protocol/wake';
import { waitFor } from '../helpers/wait';

/** One handoff from alice to bob, and the wakes recorded for it. */
function mail() {
  const hot = { message: { id: 'm1', from: 'alice' }, deliveries: { bob: { wakes: [] } } } as unknown as HotMessage;
  let failNext = false;
  const logs: string[] = [];
  const commit = (events: BusEvent[]) => {
    if (failNext) {
      failNext = false;
      return Promise.reject(new Error('ENOSPC: no space left on device'));
    }
    for (const e of events) if (e.type === 'woken') (hot.deliveries.bob.wakes ??= []).push(e.wake);
    return Promise.resolve();
  };
  return {
    hot,
    logs,
    failNextRecord: () => (failNext = true),
    deps: {
      unsurfaced: () => [hot],
      commit,
      mode: () => 'on' as const,
      node: 'n',
      now: () => Date.now(),
      log: (l: string) => logs.push(l),
    },
  };
}

/** Begin as the hub's attention does: idle until a wake marks it busy, idle again on undo. */
function idle(): Begin {
  let busy = false;
  const begin: Begin = () => !busy && (busy = true);
  begin.undo = () => (busy = false);
  return begin;
}

describe('a wake is typed once per handoff', () => {
  it('tmux: a wake whose record fails is not typed; the next arrival types it once', async () => {
    const m = mail();
    const typed: string[] = [];
    const still: PaneLook = { prompt: '2|> ', inputAt: 0, unusable: false };
    const waking = new Waking({
      ...m.deps,
      quietMs: 0,
      pane: { lookAt: () => Promise.resolve(still), typeLine: (_t, text) => (typed.push(text), Promise.resolve()) },
    });
    const t: WakeTarget = {
      key: 's',
      identity: 'bob',
      cli: 'codex',
      terminal: { kind: 'tmux', socket: '/tmux', pane: '%0' },
    };
    waking.rested(t);
    m.failNextRecord();
    await waking.nudge(t, idle());
    assert.ok(
      m.logs.some((l) => /could not wake bob .*ENOSPC/.test(l)),
      m.logs.join('\n'),
    );
    await waking.nudge(t, idle()); // the next arrival
    await waking.nudge(t, idle()); // and another: recorded now, not typed again
    assert.equal(typed.length, 1, `typed: ${JSON.stringify(typed)}`);
    assert.equal(m.hot.deliveries.bob.wakes?.length, 1);
    waking.close();
  });

  it('editor: a window that answers after the hub stopped waiting is not asked again, even when a new window comes; its late answer is recorded', async () => {
    const m = mail();
    const editor = new EditorTerminals(50, 50);
    let typed = 0;
    let answerLate: (a: TerminalWakeAnswer) => void = () => undefined;
    editor.add('slow', {
      wake: () =>
        new Promise((resolve) => {
          typed++; // it types, then takes its time to say so
          answerLate = resolve;
        }),
      askPerson: () => Promise.resolve(true),
    });
    const waking = new Waking({ ...m.deps, editor });
    const t: WakeTarget = { key: 's', identity: 'bob', cli: 'codex', agentPid: 4242 };
    await waking.nudge(t, idle());
    assert.ok(
      m.logs.some((l) => l.includes('answer in 50 ms')),
      m.logs.join('\n'),
    );
    editor.add('new', {
      wake: () => Promise.resolve({ woken: false, found: false, why: 'not here' }),
      askPerson: () => Promise.resolve(true),
    });
    await waking.nudge(t, idle());
    assert.equal(typed, 1, 'typed once');
    answerLate({ woken: true, terminal: 'codex bob' });
    await waitFor(() => (m.hot.deliveries.bob.wakes?.length ?? 0) === 1, 5000, 'the late wake recorded');
    assert.equal(m.hot.deliveries.bob.wakes![0].terminal, 'codex bob');
    await waking.nudge(t, idle());
    assert.equal(typed, 1, 'still once');
  });

  it('editor: a wake the window typed but the hub could not record is not typed again', async () => {
    const m = mail();
    const editor = new EditorTerminals(5000, 5000);
    let typed = 0;
    editor.add('win', {
      wake: () => (typed++, Promise.resolve({ woken: true, terminal: 'codex bob' })),
      askPerson: () => Promise.resolve(true),
    });
    const waking = new Waking({ ...m.deps, editor });
    const t: WakeTarget = { key: 's', identity: 'bob', cli: 'codex', agentPid: 4242 };
    m.failNextRecord();
    await waking.nudge(t, idle());
    await waking.nudge(t, idle());
    assert.equal(typed, 1);
  });
});

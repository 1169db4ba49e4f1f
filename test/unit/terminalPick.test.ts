// Which integrated terminal a wake is typed into, and when the window refuses: the pure decision
// behind extension/client/terminalWake.ts, and the check of what the hub asks for.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pickTerminal, processChain, type TerminalFacts } from '../../extension/client/terminalPick';
import { readWakeParams, wakeLine } from '../../extension/protocol/wake';

const QUIET = 10_000;
const NOW = 1_000_000;
/** The agent 400 runs under shell 300 of the terminal "agent"; 200 is another terminal's shell. */
const chain = processChain(400, [300, 100], []);
const terms = (over: Partial<TerminalFacts>[] = []): TerminalFacts[] =>
  [
    { name: 'other', shellPid: 200, active: false },
    { name: 'agent', shellPid: 300, active: false },
    { name: 'starting', shellPid: undefined, active: false },
  ].map((t, i) => ({ ...t, ...over[i] }));

describe('picking the terminal to wake an agent in', () => {
  it('is the terminal whose process is the agent or its nearest ancestor', () => {
    assert.deepEqual(pickTerminal(terms(), chain, true, NOW, QUIET), { index: 1 });
    // A terminal started with the agent itself as its program: the nearest wins over its parent's.
    assert.deepEqual(pickTerminal(terms([{ shellPid: 400 }]), chain, true, NOW, QUIET), { index: 0 });
  });

  it('refuses when no terminal of the window runs it, and says so as not its own', () => {
    const r = pickTerminal(terms(), processChain(999, [1], []), true, NOW, QUIET);
    assert.deepEqual(r, { found: false, why: 'no integrated terminal of this window runs it' });
  });

  it('refuses the active terminal of a focused window, and asks to be asked again', () => {
    const r = pickTerminal(terms([{}, { active: true }]), chain, true, NOW, QUIET);
    assert.ok(!('index' in r));
    assert.equal(r.found, true);
    assert.equal(r.retryInMs, QUIET);
    assert.match(r.why, /"agent" is the active terminal of the focused window/);
  });

  it('types into the active terminal of a window nobody is at, unless they left it lately', () => {
    assert.deepEqual(pickTerminal(terms([{}, { active: true }]), chain, false, NOW, QUIET), { index: 1 });
    const lately = pickTerminal(terms([{}, { active: true, personAt: NOW - 4000 }]), chain, false, NOW, QUIET);
    assert.ok(!('index' in lately));
    assert.equal(lately.retryInMs, 6000, 'asked again once the quiet time has passed');
    assert.match(lately.why, /the person was at "agent" 4 s ago/);
    const long = pickTerminal(terms([{}, { personAt: NOW - QUIET }]), chain, true, NOW, QUIET);
    assert.deepEqual(long, { index: 1 });
  });

  it("another terminal's use does not hold the agent's back", () => {
    assert.deepEqual(pickTerminal(terms([{ active: true, personAt: NOW }]), chain, true, NOW, QUIET), { index: 1 });
  });

  it('the process chain keeps the nearest first and no repeats', () => {
    assert.deepEqual(processChain(400, [300, 100], [410, 400, 300, 100]), [400, 300, 100, 410]);
  });
});

describe("the hub's wake request, as the window reads it", () => {
  const good = { agentPid: 400, ancestors: [300], from: ['alice'], count: 1 };

  it('builds its line only from sender names, never from text the hub sends', () => {
    const p = readWakeParams(good);
    assert.ok(typeof p !== 'string');
    assert.equal(wakeLine(p.from, p.count), 'New handoff from alice — check your Handoff inbox');
    assert.equal(wakeLine(['alice', 'carol'], 3), 'New handoffs from alice, carol — check your Handoff inbox');
    // A "name" carrying a command and a newline is refused: nothing could be typed with it.
    assert.match(String(readWakeParams({ ...good, from: ['x\nrm -rf ~\n'] })), /from must name/);
    assert.match(String(readWakeParams({ ...good, from: [] })), /from must name/);
    assert.match(String(readWakeParams({ ...good, agentPid: -1 })), /agentPid/);
    assert.match(String(readWakeParams({ ...good, ancestors: ['1'] })), /ancestors/);
    assert.match(String(readWakeParams({ ...good, count: 0 })), /count/);
    assert.match(String(readWakeParams(undefined)), /agentPid/);
  });
});

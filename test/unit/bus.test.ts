// The bus semantics as plain functions over data: no sockets, no disk, no clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decideReceipt,
  decideSend,
  DEFAULT_LIMITS,
  type ReceiptDecision,
  type SendContext,
} from '../../extension/hub/bus/decide';
import { BusError } from '../../extension/hub/bus/errors';
import { editDistance, nearestNames } from '../../extension/hub/bus/identity';
import { coverage, dueEvents, overdue, pendingLedger } from '../../extension/hub/bus/ledger';
import { emptyState, type BusState, type Message } from '../../extension/hub/bus/model';
import { RecentSends } from '../../extension/hub/bus/recentSends';
import { apply, isSettled } from '../../extension/hub/bus/reduce';

const T0 = 1_700_000_000_000;

function recorded(d: ReceiptDecision) {
  assert.equal(d.kind, 'record');
  return (d as Extract<ReceiptDecision, { kind: 'record' }>).event;
}

function world(...names: string[]): BusState {
  const s = emptyState('n1');
  for (const name of names) apply(s, { type: 'identity', name, at: T0, roles: name === 'rev' ? ['reviewer'] : [] });
  return s;
}

function ctx(state: BusState, over: Partial<SendContext> = {}): SendContext {
  let n = state.seq;
  let id = 0;
  return {
    caller: { identity: 'alice', session: 's-a', node: 'n1' },
    now: T0,
    newId: () => `01JD3V7W2K8Q5X9Y4Z6A1B${String(id++).padStart(4, '0')}`,
    nextSeq: () => ++n,
    liveIdentities: () => new Set(['alice', 'bob']),
    recent: new RecentSends(),
    limits: DEFAULT_LIMITS,
    ...over,
  };
}

function send(state: BusState, to: string[], body: string, over: Partial<SendContext> = {}): Message {
  const d = decideSend(state, { to, body }, ctx(state, over));
  assert.equal(d.kind, 'new');
  apply(state, { type: 'sent', message: d.message });
  return d.message;
}

function refusal(fn: () => unknown): BusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof BusError) return e;
    throw e;
  }
  assert.fail('expected a BusError');
}

describe('identity resolution', () => {
  it('is exact, and a near miss lists the nearest names', () => {
    const s = world('alice', 'bob', 'reviewer', 'coordinator');
    for (const typo of ['bbo', 'Bob', 'bob1', 'rewiever', 'coordinatr']) {
      const e = refusal(() => decideSend(s, { to: [typo], body: 'x' }, ctx(s)));
      assert.equal(e.code, 'unknown_identity');
      assert.ok((e.details.suggestions as string[]).length > 0, `${typo} gets suggestions`);
    }
    assert.deepEqual(nearestNames('bbo', ['alice', 'bob', 'reviewer']), ['bob']);
    assert.equal(editDistance('reviewer', 'rewiever'), 2);
    assert.equal(refusal(() => decideSend(s, { to: ['a b'], body: 'x' }, ctx(s))).code, 'invalid_identity');
  });

  it('resolves role:NAME and * (every other live identity)', () => {
    const s = world('alice', 'bob', 'rev');
    assert.deepEqual(send(s, ['role:reviewer'], 'r').recipients, ['rev']);
    assert.deepEqual(send(s, ['*'], 'all').recipients, ['bob']);
    assert.equal(refusal(() => decideSend(s, { to: ['role:nobody'], body: 'x' }, ctx(s))).code, 'unknown_identity');
  });

  it('`*` with no other live identity, and more recipients than the limit, are refused: never a send to nobody', () => {
    const s = world('alice', 'bob', 'rev');
    const alone = refusal(() =>
      decideSend(s, { to: ['*'], body: 'anyone?' }, ctx(s, { liveIdentities: () => new Set(['alice']) })),
    );
    assert.equal(alone.code, 'unknown_identity');
    assert.match(alone.message, /there is none right now/);
    const limits = { ...DEFAULT_LIMITS, maxRecipients: 2 };
    assert.equal(
      refusal(() => decideSend(s, { to: ['alice', 'bob', 'rev'], body: 'x' }, ctx(s, { limits }))).code,
      'invalid_input',
    );
    assert.equal(
      decideSend(s, { to: ['bob', 'rev'], body: 'x' }, ctx(s, { limits })).kind,
      'new',
      'at the limit is fine',
    );
    assert.equal(s.seq, 0, 'nothing was stored');
  });
});

describe('send decisions', () => {
  it('refuses oversize and empty bodies before anything is stored', () => {
    const s = world('alice', 'bob');
    const e = refusal(() => decideSend(s, { to: ['bob'], body: 'é'.repeat(40_000) }, ctx(s)));
    assert.equal(e.code, 'payload_too_large');
    assert.equal(e.details.bytes, 80_000, 'bytes, not characters');
    assert.equal(refusal(() => decideSend(s, { to: ['bob'], body: '   ' }, ctx(s))).code, 'invalid_input');
    assert.equal(s.seq, 0);
  });

  it('an idempotency key returns the first id; a repeated body in the window is a probable duplicate', () => {
    const s = world('alice', 'bob');
    const d1 = decideSend(s, { to: ['bob'], body: 'x', idempotencyKey: 'k' }, ctx(s));
    assert.equal(d1.kind, 'new');
    if (d1.kind !== 'new') return;
    apply(s, { type: 'sent', message: d1.message });
    assert.deepEqual(decideSend(s, { to: ['bob'], body: 'other', idempotencyKey: 'k' }, ctx(s)), {
      kind: 'duplicate',
      id: d1.message.id,
      why: 'idempotency_key',
    });
    const recent = new RecentSends();
    recent.add({ id: 'FIRST', from: 'alice', recipients: ['bob'], body: 'x', sentAt: T0 });
    assert.deepEqual(decideSend(s, { to: ['bob'], body: 'x' }, ctx(s, { recent })), {
      kind: 'duplicate',
      id: 'FIRST',
      why: 'probable_duplicate',
    });
    assert.equal(decideSend(s, { to: ['bob'], body: 'x', insist: true }, ctx(s, { recent })).kind, 'new');
    assert.equal(
      decideSend(s, { to: ['bob'], body: 'x' }, ctx(s, { recent, now: T0 + DEFAULT_LIMITS.duplicateWindowMs + 1 }))
        .kind,
      'new',
    );
  });
});

describe('receipts and the lifecycle', () => {
  it('only a recipient writes receipts; the state only moves forward', () => {
    const s = world('alice', 'bob', 'carol');
    const m = send(s, ['bob'], 'do it');
    const bob = { identity: 'bob', session: 's-b', node: 'n1' };
    assert.equal(
      refusal(() => decideReceipt(s.hot[m.id], false, m.id, 'ack', { ...bob, identity: 'carol' }, T0)).code,
      'not_addressed_to_you',
    );
    assert.equal(refusal(() => decideReceipt(undefined, false, m.id, 'ack', bob, T0)).code, 'unknown_message');
    assert.equal(refusal(() => decideReceipt(undefined, false, 'nope', 'ack', bob, T0)).code, 'invalid_message_id');
    assert.deepEqual(
      decideReceipt(undefined, true, m.id, 'ack', bob, T0),
      { kind: 'settled' },
      'archived: nothing to change',
    );

    apply(s, {
      type: 'pushed',
      id: m.id,
      recipient: 'bob',
      push: { session: 's-b', node: 'n1', at: T0 + 1, kind: 'live' },
    });
    assert.equal(s.hot[m.id].deliveries.bob.state, 'pushed');
    apply(s, recorded(decideReceipt(s.hot[m.id], false, m.id, 'ack', bob, T0 + 5000)));
    apply(s, recorded(decideReceipt(s.hot[m.id], false, m.id, 'read', bob, T0 + 6000)));
    assert.equal(s.hot[m.id].deliveries.bob.state, 'acked', 'a late read does not move it back');
    assert.equal(isSettled(s.hot[m.id], T0 + 7000), false, 'acked is not done');
    apply(s, recorded(decideReceipt(s.hot[m.id], false, m.id, 'result', bob, T0 + 9000, 'done', 'shipped')));
    assert.equal(s.hot[m.id].deliveries.bob.state, 'done');
    assert.equal(isSettled(s.hot[m.id], T0 + 9000), true);
    const c = coverage(s, () => 0, T0).find((x) => x.identity === 'bob')!;
    assert.deepEqual([c.addressed, c.acked, c.medianAckMs], [1, 1, 5000]);
  });

  it('the same receipt twice is recorded once; a different one still counts', () => {
    const s = world('alice', 'bob');
    const m = send(s, ['bob'], 'ack me once');
    const bob = { identity: 'bob', session: 's-b', node: 'n1' };
    apply(s, recorded(decideReceipt(s.hot[m.id], false, m.id, 'ack', bob, T0 + 1)));
    assert.deepEqual(
      decideReceipt(s.hot[m.id], false, m.id, 'ack', { ...bob, session: 's-b2' }, T0 + 2),
      { kind: 'repeat', state: 'acked' },
      'an ACK from another session of bob is a repeat',
    );
    apply(s, recorded(decideReceipt(s.hot[m.id], false, m.id, 'result', bob, T0 + 3, 'stuck', 'blocked on CI')));
    assert.equal(
      decideReceipt(s.hot[m.id], false, m.id, 'result', bob, T0 + 4, 'stuck', 'blocked on CI').kind,
      'repeat',
    );
    assert.equal(
      decideReceipt(s.hot[m.id], false, m.id, 'result', bob, T0 + 5, 'done', 'CI fixed').kind,
      'record',
      'a new outcome is recorded',
    );
    assert.deepEqual(
      s.hot[m.id].deliveries.bob.receipts.map((r) => r.kind),
      ['ack', 'result'],
    );
    assert.equal(coverage(s, () => 0, T0).find((c) => c.identity === 'bob')!.acked, 1, 'counted once');
  });

  it('a rejected result fails the delivery with the reason and stays visible until resolved', () => {
    const s = world('alice', 'bob');
    const m = send(s, ['bob'], 'do the impossible');
    apply(
      s,
      recorded(
        decideReceipt(
          s.hot[m.id],
          false,
          m.id,
          'result',
          { identity: 'bob', session: 's', node: 'n1' },
          T0 + 1,
          'rejected',
          'out of scope',
        ),
      ),
    );
    assert.equal(s.hot[m.id].deliveries.bob.state, 'failed');
    assert.match(s.hot[m.id].deliveries.bob.failure!.reason, /rejected by bob: out of scope/);
    assert.equal(isSettled(s.hot[m.id], T0 + 2), false);
    assert.equal(overdue(s, T0 + 2).count, 1);
    apply(s, { type: 'resolved', id: m.id, resolution: { by: 'human', at: T0 + 3 } });
    assert.equal(isSettled(s.hot[m.id], T0 + 3), true);
    assert.equal(overdue(s, T0 + 4).count, 0);
  });
});

describe('ledger, SLA and TTL', () => {
  it('chases once past the SLA, dead-letters past the TTL, and counts ghosts', () => {
    const s = world('alice', 'bob');
    const m = send(s, ['bob'], 'urgent');
    const { slaMs, ttlMs } = m;
    assert.deepEqual(dueEvents(s, T0 + slaMs - 1), []);
    assert.equal(overdue(s, T0 + slaMs - 1).count, 0);
    const chase = dueEvents(s, T0 + slaMs + 1);
    assert.deepEqual(chase, [{ type: 'chased', id: m.id, recipient: 'bob', at: T0 + slaMs + 1 }]);
    chase.forEach((e) => apply(s, e));
    assert.deepEqual(dueEvents(s, T0 + slaMs + 2), [], 'one chase only');
    assert.equal(overdue(s, T0 + slaMs + 2).count, 1);
    assert.equal(pendingLedger(Object.values(s.hot), T0 + slaMs + 2)[0].overdue, true);
    assert.equal(coverage(s, () => 0, T0).find((c) => c.identity === 'bob')!.ghost, true);
    assert.equal(coverage(s, () => 1, T0).find((c) => c.identity === 'bob')!.ghost, false);
    const dead = dueEvents(s, T0 + ttlMs + 1);
    assert.equal(dead[0].type, 'failed');
    dead.forEach((e) => apply(s, e));
    assert.equal(s.hot[m.id].deliveries.bob.state, 'failed');
    assert.equal(pendingLedger(Object.values(s.hot), T0 + ttlMs + 2)[0].deadLettered, true, 'a dead letter is visible');
  });
});

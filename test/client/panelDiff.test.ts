// The host→webview update is keyed by message id: after the first post, one new receipt posts one
// row (not the whole model), a removed row posts nothing but its absence from the order, and a
// fresh view gets everything again. Counted in rows and bytes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PanelDiff } from '../../extension/client/panel/diff';
import { panelModel } from '../../extension/client/panel/model';
import type { LedgerEntry, Snapshot } from '../../extension/protocol/views';

const now = Date.UTC(2026, 0, 1, 12, 0, 0);
const entry = (i: number, state: 'pushed' | 'acked' = 'pushed'): LedgerEntry => ({
  id: `01J${String(i).padStart(23, '0')}`,
  seq: 10_000 - i,
  from: 'builder',
  thread: `t${i}`,
  preview: `handoff number ${i}: ${'x'.repeat(80)}`,
  sentAt: now - i * 1000,
  dueAt: now + 600_000,
  requiresAck: true,
  overdue: false,
  deadLettered: false,
  resolved: false,
  pending: true,
  awaitingAck: state === 'pushed',
  recipients: [{ recipient: 'reviewer', state, sessionsPushed: 1, overdue: false, awaitingAck: state === 'pushed' }],
});
const snapshot = (events: LedgerEntry[]): Snapshot => ({
  node: 'n1',
  workspace: '/w',
  now,
  store: { ok: true, dir: '/s', archived: 0 },
  sessions: [],
  coverage: [],
  pending: events,
  overdue: { count: 0, ids: [] },
  messages: events,
  people: [],
  openCount: events.length,
  pendingCount: events.length,
  awaitingAckCount: events.filter((e) => e.awaitingAck).length,
});
const model = (events: LedgerEntry[]) => panelModel({ kind: 'running', pid: 1 }, snapshot(events), 'all', 'maria');
const bytes = (x: unknown) => Buffer.byteLength(JSON.stringify(x));

describe('keyed panel updates', () => {
  it('posts every row once, then only the rows that changed', () => {
    const events = Array.from({ length: 200 }, (_, i) => entry(i));
    const diff = new PanelDiff();
    const first = diff.update(model(events));
    assert.equal(first.events.changed.length, 200);
    assert.equal(first.events.order.length, 200);

    const same = diff.update(model(events));
    assert.deepEqual(
      [same.events.changed.length, same.pending.changed.length],
      [0, 0],
      'nothing changed, no row posted',
    );

    events[17] = entry(17, 'acked');
    const one = diff.update(model(events));
    assert.deepEqual(
      one.events.changed.map((e) => e.id),
      [events[17].id],
      'one receipt, one row',
    );
    assert.deepEqual(
      one.pending.changed.map((e) => e.id),
      [events[17].id],
    );
    assert.equal(one.events.order.length, 200, 'the order still lists every row');
    const full = bytes({ type: 'model', model: model(events) });
    const patch = bytes({ type: 'update', update: one });
    console.log(
      `200 rows, one receipt: full model ${full} bytes, keyed update ${patch} bytes (${(full / patch).toFixed(1)}x smaller)`,
    );
    assert.ok(patch < full / 2, `the update (${patch} B) is well under the full model (${full} B)`);

    const gone = diff.update(model(events.filter((_, i) => i !== 3)));
    assert.deepEqual(
      [gone.events.changed.length, gone.events.order.length, gone.events.order.includes(events[3].id)],
      [0, 199, false],
      'a removed row is only missing from the order',
    );

    const back = diff.update(model(events));
    assert.deepEqual(
      back.events.changed.map((e) => e.id),
      [events[3].id],
      'a row that comes back is posted again',
    );

    diff.reset();
    assert.equal(diff.update(model(events)).events.changed.length, 200, 'a fresh view gets every row');
  });
});

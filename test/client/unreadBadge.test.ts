// The unread badge on the Handoff icon, as data: the person's own unread count (the same number
// the status bar shows), none at zero, none for someone else's mail.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unreadBadge } from '../../extension/client/person/inbox';
import { statusView } from '../../extension/client/statusView';
import type { PersonView, Snapshot } from '../../extension/protocol/views';

const now = Date.UTC(2026, 0, 1, 12, 0, 0);
const person = (identity: string, unread: number): PersonView => ({
  identity,
  presence: { live: true, windows: 1, lastFocusedAt: now },
  unread,
  inbox: [],
});
const snapshot = (people: PersonView[]): Snapshot => ({
  node: 'n1',
  workspace: '/w',
  now,
  store: { ok: true, dir: '/s', archived: 0 },
  sessions: [],
  coverage: [],
  pending: [],
  overdue: { count: 0, ids: [] },
  messages: [],
  openCount: 0,
  pendingCount: 0,
  awaitingAckCount: 0,
  people,
});

describe('the unread badge on the Handoff icon', () => {
  it("is the person's unread count, with a tooltip that says whose", () => {
    assert.deepEqual(unreadBadge(snapshot([person('maria', 2), person('bob', 5)]), 'maria'), {
      value: 2,
      tooltip: '2 unread handoffs for maria',
    });
    assert.equal(unreadBadge(snapshot([person('maria', 1)]), 'maria')?.tooltip, '1 unread handoff for maria');
  });

  it('is gone at zero, before the first snapshot, and for mail that is not theirs', () => {
    assert.equal(unreadBadge(snapshot([person('maria', 0)]), 'maria'), undefined);
    assert.equal(unreadBadge(undefined, 'maria'), undefined);
    assert.equal(unreadBadge(snapshot([person('bob', 3)]), 'maria'), undefined);
  });

  it('says the same number as the status bar', () => {
    const s = snapshot([person('maria', 3)]);
    assert.match(statusView({ kind: 'running' }, s, now, 'maria').text, /\$\(mail\) 3/);
    assert.equal(unreadBadge(s, 'maria')?.value, 3);
  });
});

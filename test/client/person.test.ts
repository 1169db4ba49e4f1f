// The person's inbox on the editor side, as data: which arrivals notify (once each, none for the
// mail already there), untrusted text in the notification, the inbox rows, the unread count on
// the status bar and its click.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { panelModel } from '../../extension/client/panel/model';
import { Arrivals, arrivalText, inboxPicks } from '../../extension/client/person/inbox';
import { statusView } from '../../extension/client/statusView';
import type { PersonInboxItem, Snapshot } from '../../extension/protocol/views';

const now = Date.UTC(2026, 0, 1, 12, 0, 0);
const item = (id: string, over: Partial<PersonInboxItem> = {}): PersonInboxItem => ({
  id,
  from: 'builder',
  thread: id,
  preview: `handoff ${id}`,
  sentAt: now - 1000,
  state: 'pushed',
  unread: true,
  requiresAck: true,
  dueAt: now + 60_000,
  ...over,
});
const snapshot = (inbox: PersonInboxItem[]): Snapshot => ({
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
  people: [
    {
      identity: 'maria',
      presence: { live: true, windows: 1, lastFocusedAt: now },
      unread: inbox.filter((i) => i.unread).length,
      inbox,
    },
  ],
});

describe('the person at the editor', () => {
  it('notifies each new unread handoff once, and none of the mail already there', () => {
    const a = new Arrivals();
    assert.deepEqual(a.fresh('maria', undefined), [], 'no inbox yet: nothing learned');
    assert.deepEqual(a.fresh('maria', [item('OLD')]), [], 'the first look only learns what is there');
    assert.deepEqual(
      a.fresh('maria', [item('NEW'), item('OLD')]).map((i) => i.id),
      ['NEW'],
    );
    assert.deepEqual(a.fresh('maria', [item('NEW'), item('OLD')]), [], 'not again on the next snapshot');
    assert.deepEqual(
      a.fresh('maria', [item('READ', { unread: false, state: 'read' })]),
      [],
      'read elsewhere first: no notification',
    );
    assert.deepEqual(a.fresh('lead', [item('LEADS')]), [], 'a new identity: its old mail is learned, not announced');
    assert.deepEqual(
      a.fresh('lead', [item('LEADS'), item('NEXT')]).map((i) => i.id),
      ['NEXT'],
    );
  });

  it("a handoff sent after the window started watching is new even in the person's first snapshot", () => {
    let t = now;
    const a = new Arrivals(() => t);
    assert.deepEqual(a.fresh('maria', undefined), [], 'not at this hub yet');
    t += 5000;
    const early = item('EARLY', { sentAt: now - 1000 });
    const racing = item('RACING', { sentAt: now + 2000 });
    assert.deepEqual(
      a.fresh('maria', [racing, early]).map((i) => i.id),
      ['RACING'],
      'the old one is learned, the one sent meanwhile announced',
    );
    assert.deepEqual(a.fresh('maria', [racing, early]), [], 'once');
    assert.deepEqual(
      a.fresh('lead', [item('OLDER', { sentAt: now + 3000 })]),
      [],
      'a new identity watches from now: what it already had is not announced',
    );
  });

  it('keeps a body inert in the notification: HTML stays text, a command link is broken', () => {
    const text = arrivalText(
      item('X', { preview: '<img src=x onerror=alert(1)> [run](command:workbench.action.terminal.new) **bold**' }),
    );
    assert.equal(
      text,
      'Handoff from builder: "<img src=x onerror=alert(1)> [run]\u200b(command:workbench.action.terminal.new) **bold**"',
    );
    const esc = arrivalText(
      item('E', { escalation: { of: 'ORIG', silent: 'bob' }, preview: 'Escalation: bob has not acknowledged…' }),
    );
    assert.equal(esc, "Handoff Escalation: bob has not acknowledged builder's handoff, chased and still silent.");
  });

  it('lists the inbox newest first with unread marked, and counts unread on the status bar', () => {
    const s = snapshot([item('B'), item('A', { unread: false, state: 'acked' })]);
    const m = panelModel({ kind: 'running', pid: 1 }, s, 'all', 'maria');
    assert.deepEqual(
      m.inbox.rows.map((r) => [r.id, r.unread, r.stateLabel, r.canAck]),
      [
        ['B', true, 'unread', true],
        ['A', false, 'ACKed · your result is awaited', false],
      ],
    );
    assert.equal(m.inbox.unread, 1);
    assert.equal(panelModel({ kind: 'running', pid: 1 }, s, 'all', 'bob').inbox.rows.length, 0, 'only my own inbox');
    const v = statusView({ kind: 'running', pid: 1 }, s, now, 'maria');
    assert.match(v.text, /\$\(mail\) 1$/);
    assert.equal(v.command, 'handoff.openInbox');
    assert.match(v.tooltip, /1 unread handoff for maria/);
    assert.doesNotMatch(statusView({ kind: 'running', pid: 1 }, snapshot([]), now, 'maria').text, /mail/);
    assert.deepEqual(
      inboxPicks(s.people[0].inbox).map((p) => p.label),
      ['$(circle-filled) builder', '$(circle-outline) builder'],
    );
  });
});

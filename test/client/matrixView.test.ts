// The Matrix link as the editor shows it: the panel's header and advisory reads, and the status
// bar's mark, built from the hub's LinkStatus. No editor, no homeserver.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { linkBadge, linkTooltip } from '../../extension/client/matrix/linkText';
import { panelModel } from '../../extension/client/panel/model';
import type { LedgerEntry, LinkStatus, Snapshot } from '../../extension/protocol/views';

const now = Date.UTC(2026, 0, 1, 12, 0, 0);
const link = (over: Partial<LinkStatus> = {}): LinkStatus => ({
  transport: 'matrix',
  state: 'connected',
  homeserver: 'https://hs.example.org',
  userId: '@alice:example.org',
  room: '!abc:example.org',
  outbox: 0,
  lastSyncAt: now,
  advisoryReads: {},
  advisoryReadsNote: 'Per user, not per session; advisory, never an ACK.',
  ...over,
});
const entry: LedgerEntry = {
  id: 'M1',
  seq: 1,
  from: 'alice',
  thread: 'M1',
  preview: 'review',
  sentAt: now - 5000,
  dueAt: now + 60_000,
  requiresAck: true,
  recipients: [{ recipient: 'bob@nodeB', state: 'pushed', sessionsPushed: 0, overdue: false, awaitingAck: true }],
  overdue: false,
  deadLettered: false,
  resolved: false,
  pending: true,
  awaitingAck: true,
};
const snapshot = (r?: LinkStatus) =>
  ({
    node: 'n1',
    workspace: '/w',
    now,
    store: { ok: true, dir: '/s', archived: 0 },
    sessions: [],
    coverage: [],
    pending: [entry],
    overdue: { count: 0, ids: [] },
    messages: [entry],
    people: [],
    openCount: 1,
    pendingCount: 1,
    awaitingAckCount: 1,
    ...(r ? { link: r } : {}),
  }) satisfies Snapshot;
const running = { kind: 'running' as const, pid: 1 };

describe('Matrix in the panel model', () => {
  it('has no Matrix header when Matrix is off', () => {
    assert.equal(panelModel(running, snapshot(), 'all', 'maria').matrix, undefined);
  });

  it('shows state, account, room, homeserver and outbox', () => {
    const m = panelModel(running, snapshot(link({ outbox: 3 })), 'all', 'maria').matrix!;
    assert.equal(m.state, 'connected');
    assert.equal(m.headline, 'Matrix connected as @alice:example.org in !abc:example.org');
    assert.equal(m.outboxLabel, 'outbox 3 (not on the homeserver yet)');
    assert.equal(m.icon, 'cloud-upload');
    assert.match(m.lastSyncLabel, /^last sync \d\d:\d\d:\d\d$/);
  });

  it('shows refused node claims, shared accounts and what the hub did not take', () => {
    const notices = [
      'Refused: @m:x claimed node nodeA — nodeA is bound to @a:x.',
      'Nodes nodeB, nodeC share the Matrix account @b:x: they cannot be told apart (each could speak for the others).',
    ];
    const m = panelModel(
      running,
      snapshot(link({ notices, dropped: { not_allowed: 1, forged_node: 2 } })),
      'all',
      'maria',
    ).matrix!;
    assert.deepEqual(m.notices, notices);
    assert.equal(m.droppedLabel, '3 room events not taken: forged node 2, not allowed 1');
    const quiet = panelModel(running, snapshot(link()), 'all', 'maria').matrix!;
    assert.deepEqual(quiet.notices, []);
    assert.equal(quiet.droppedLabel, undefined);
  });

  it('says whether the room is end-to-end encrypted, and which devices are verified, unverified or refused', () => {
    const plain = panelModel(running, snapshot(link()), 'all', 'maria').matrix!;
    assert.deepEqual(plain.encryption, {
      on: false,
      label: 'not end-to-end encrypted: the homeserver can read every handoff',
      devices: [],
    });
    const encryption = {
      state: 'on' as const,
      device: 'AAAA',
      deviceKey: 'k',
      devices: [
        { user: '@alice:example.org', device: 'AAAA', trust: 'this hub' as const },
        { user: '@b:example.org', device: 'BBBB', trust: 'verified' as const },
        { user: '@b:example.org', device: 'EVIL', trust: 'refused' as const },
        { user: '@carol:example.org', device: 'CCCC', trust: 'unverified' as const },
      ],
      waitingForKeys: 2,
      undecryptable: 0,
    };
    const on = panelModel(running, snapshot(link({ encryption })), 'all', 'maria').matrix!;
    assert.equal(on.encryption.on, true);
    assert.equal(
      on.encryption.label,
      "end-to-end encrypted · 1 verified by node keys · 1 unverified (people's: they get the keys) · 1 refused (no node signed for them) · 2 events waiting for keys · this hub's device AAAA",
    );
    assert.deepEqual(on.encryption.devices, [
      '@b:example.org BBBB verified',
      '@b:example.org EVIL refused',
      '@carol:example.org CCCC unverified',
    ]);
    const failed = panelModel(
      running,
      snapshot(
        link({ encryption: { state: 'failed', error: 'no device', devices: [], waitingForKeys: 0, undecryptable: 0 } }),
      ),
      'all',
      'maria',
    ).matrix!;
    assert.equal(failed.encryption.on, false);
    assert.equal(failed.encryption.label, 'end-to-end encrypted, but this hub has no device: no device');
  });

  it('says why when refused or retrying, in the tone of the problem', () => {
    const refused = panelModel(
      running,
      snapshot(link({ state: 'refused', error: '401 M_UNKNOWN_TOKEN' })),
      'all',
      'maria',
    ).matrix!;
    assert.equal(refused.tone, 'error');
    assert.equal(refused.headline, 'Matrix refused by https://hs.example.org: 401 M_UNKNOWN_TOKEN');
    const retrying = panelModel(
      running,
      snapshot(link({ state: 'retrying', error: 'ECONNREFUSED' })),
      'all',
      'maria',
    ).matrix!;
    assert.equal(retrying.tone, 'warn');
  });

  it('labels m.read receipts as advisory and per Matrix user, on the message they read, not as receipts', () => {
    const r = link({ advisoryReads: { M1: [{ user: '@bob:example.org', at: now }] } });
    const model = panelModel(running, snapshot(r), 'all', 'maria');
    const row = model.events[0];
    assert.match(
      row.advisoryReads!.label,
      /^@bob:example\.org \d\d:\d\d:\d\d · m\.read, advisory \(per Matrix user, not per session\)$/,
    );
    assert.equal(row.advisoryReads!.note, r.advisoryReadsNote);
    assert.equal(row.recipients[0].state, 'pushed', 'an m.read does not move the recipient state');
    assert.equal(model.pending[0].advisoryReads?.label, row.advisoryReads!.label);
  });
});

describe('Matrix in the status bar', () => {
  it('marks connected quietly, the outbox with its count, trouble in words', () => {
    assert.equal(linkBadge(link()), '$(cloud)');
    assert.equal(linkBadge(link({ outbox: 2 })), '$(cloud-upload) 2');
    assert.equal(linkBadge(link({ state: 'retrying' })), '$(debug-disconnect) Matrix retrying');
    assert.equal(linkBadge(link({ state: 'refused' })), '$(debug-disconnect) Matrix refused');
    assert.match(
      linkTooltip(link({ state: 'retrying', error: 'ECONNREFUSED', outbox: 1 })),
      /^Matrix retrying https:\/\/hs\.example\.org: ECONNREFUSED\noutbox 1 \(not on the homeserver yet\) · last sync/,
    );
  });
});

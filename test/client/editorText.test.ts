// The editor's pure parts: the Codex config edit, the send result sentence, the recipient list,
// and the panel model built from a snapshot. No editor needed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { codexServerTable, upsertTable } from '../../extension/shared/connect/codexToml';
import { describeResult, recipientPicks, refusalText, typedPick } from '../../extension/client/commands/sendText';
import { emptyInboxText } from '../../extension/cli/inboxText';
import { messageTitle } from '../../extension/client/messageTitle';
import { inertLinks } from '../../extension/client/inertLinks';
import { panelModel } from '../../extension/client/panel/model';
import { statusView } from '../../extension/client/statusView';
import type { LedgerEntry, Snapshot } from '../../extension/protocol/views';

const launch = { command: '/opt/code/node', args: ['/ext/dist/bridge.js'], env: { ELECTRON_RUN_AS_NODE: '1' } };
const table = codexServerTable('handoff', launch);
const upsertCodexServer = (toml: string, name: string, t: string) => upsertTable(toml, `mcp_servers.${name}`, t);

describe('Codex config', () => {
  it('appends the table, naming HANDOFF_HUB, TMUX and TMUX_PANE in env_vars', () => {
    const out = upsertCodexServer('', 'handoff', table);
    assert.equal(
      out,
      '[mcp_servers.handoff]\ncommand = "/opt/code/node"\nargs = ["/ext/dist/bridge.js"]\nenv = { ELECTRON_RUN_AS_NODE = "1" }\nenv_vars = ["HANDOFF_HUB", "TMUX", "TMUX_PANE"]\n',
    );
  });

  it('keeps everything else and replaces its own table and sub-tables in place', () => {
    const before =
      'model = "o4"\n\n[mcp_servers.handoff]\ncommand = "old"\n\n[mcp_servers.handoff.env]\nX = "1"\n\n[mcp_servers.other]\ncommand = "other"\n';
    const out = upsertCodexServer(before, 'handoff', table);
    assert.equal(out.match(/\[mcp_servers\.handoff/g)?.length, 1, 'one table, no stale sub-table');
    assert.ok(out.startsWith('model = "o4"\n\n[mcp_servers.handoff]\ncommand = "/opt/code/node"'));
    assert.ok(out.endsWith('[mcp_servers.other]\ncommand = "other"\n'));
    assert.equal(upsertCodexServer(out, 'handoff', table), out, 'idempotent');
  });

  it('escapes paths as TOML strings', () => {
    const t = codexServerTable('handoff', { ...launch, command: 'C:\\Program Files\\Code "x"\\node.exe' });
    assert.match(t, /^command = "C:\\\\Program Files\\\\Code \\"x\\"\\\\node\.exe"$/m);
  });
});

describe('Send Handoff text', () => {
  const base = { message_id: '01JD3V7W2K8Q5X9Y4Z6A1B2C3D', seq: 1, thread: 't' };
  it('says queued when nobody is live and pushed with the session count otherwise — never just "sent"', () => {
    const text = describeResult({
      ...base,
      state: 'pushed',
      recipients: [
        { identity: 'bob', state: 'pushed', sessions: 2, seen_when: 'next_tool_call' },
        { identity: 'eve', state: 'queued', sessions: 0, seen_when: 'when_it_calls_inbox' },
      ],
    });
    assert.match(
      text,
      /pushed to bob \(2 sessions\), its model sees it after its current tool call; queued for eve \(no live session; it is pushed when one connects\), its model sees it only when it calls inbox/,
    );
    assert.match(text, /Not proof of reading/);
    assert.doesNotMatch(text, /\bsent\b/);
  });

  it('says where a handoff to a person waits, not when a model calls inbox', () => {
    const text = describeResult({
      ...base,
      state: 'queued',
      recipients: [{ identity: 'maria', state: 'queued', sessions: 0, seen_when: 'in_their_editor' }],
    });
    assert.match(text, /queued for maria .*a person: it waits in the inbox of their Handoff view until they open it/);
    assert.doesNotMatch(text, /model|calls inbox/);
  });

  it('marks a typed name no agent has used, and offers roles and * as addresses', () => {
    const picks = recipientPicks(
      {
        coverage: [{ identity: 'reviewer', addressed: 0, acked: 0, liveSessions: 1, unacked: 0, ghost: false }],
      } as unknown as Snapshot,
      'me',
    );
    assert.equal(typedPick('reviewer', picks), undefined, 'a listed name is not offered twice');
    assert.equal(typedPick('', picks), undefined);
    const typo = typedPick('reviewr', picks)!;
    assert.match(typo.label, /^\$\(warning\) reviewr$/);
    assert.equal(typo.description, 'no agent named "reviewr" has connected to this hub: it would be refused');
    assert.match(typedPick('role:approver', picks)!.description ?? '', /^send to this address$/);
  });

  it("lists a linked repository's agents as name@repo with their liveness there", () => {
    const picks = recipientPicks(
      {
        coverage: [
          { identity: 'bob@frontend', addressed: 0, acked: 0, liveSessions: 0, unacked: 0, ghost: false, remote: true },
          { identity: 'eve@frontend', addressed: 0, acked: 0, liveSessions: 0, unacked: 0, ghost: false, remote: true },
        ],
        links: {
          name: 'backend',
          links: [
            {
              name: 'frontend',
              root: '/r/frontend',
              state: 'linked',
              linkedAt: 0,
              outbox: 0,
              peers: [{ name: 'bob', roles: [], live_sessions: 2 }],
            },
          ],
        },
      } as unknown as Snapshot,
      'me',
    );
    assert.equal(picks[0].description, 'linked repository frontend · live · 2 sessions');
    assert.equal(picks[1].description, 'linked repository frontend · offline · will be queued there');
  });

  it('`handoff inbox --as` a name nobody has used says so and lists the known names', () => {
    assert.equal(emptyInboxText('bob', ['alice', 'bob']), 'inbox of bob is empty');
    assert.equal(
      emptyInboxText('nobody', ['alice', 'bob']),
      'no agent named "nobody" has connected to this hub, so nothing can be addressed to it. Known names: alice, bob.',
    );
    assert.match(emptyInboxText('nobody', []), /Known names: none yet\.$/);
  });

  it('titles an opened handoff by its sender and first words, with nothing a path would split', () => {
    assert.equal(
      messageTitle('builder', 'Review PR #12:\n the parser now streams'),
      'builder: Review PR #12: the parser now streams',
    );
    const long = messageTitle('a/b', `x/y\\z ${'w'.repeat(80)}`);
    assert.doesNotMatch(long, /[/\\\n]/);
    assert.ok(long.length <= 'a b: '.length + 48 && long.endsWith('…'), long);
  });

  it('says a duplicate was not sent again', () => {
    const text = describeResult({
      ...base,
      state: 'pushed',
      recipients: [],
      duplicate: { why: 'probable_duplicate', note: 'Same body moments ago.' },
    });
    assert.equal(text, 'Not sent again: Same body moments ago. (01JD3V7W2K8Q5X9Y4Z6A1B2C3D)');
  });

  it('lists live identities first, marks ghosts, and leaves out the sender', () => {
    const cov = (identity: string, liveSessions: number, ghost = false) => ({
      identity,
      addressed: 1,
      acked: 0,
      liveSessions,
      unacked: ghost ? 2 : 0,
      ghost,
    });
    const picks = recipientPicks(
      { coverage: [cov('zed', 1), cov('amy', 0, true), cov('me', 1), cov('bob', 2)] } as unknown as Snapshot,
      'me',
    );
    assert.deepEqual(
      picks.map((p) => p.identity),
      ['bob', 'zed', 'amy', '*'],
    );
    assert.equal(picks[2].description, 'ghost · 2 unacked, nobody connected');
    assert.match(picks[0].label, /^\$\(circle-filled\) bob$/);
  });
});

describe('notification text', () => {
  it('cannot carry a clickable command link from a body', () => {
    const linked = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)/i; // VS Code's notification link syntax
    const body =
      'see [Run me](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22rm%22%7D) and [docs](https://x.y)';
    assert.match(body, linked);
    assert.doesNotMatch(inertLinks(body), linked);
    assert.equal(inertLinks(body).replace(/\u200b/g, ''), body, 'nothing else changes');
  });
});

describe('panel model', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  const entry = (id: string, overdue: boolean, recipients: LedgerEntry['recipients']): LedgerEntry => ({
    id,
    seq: id.charCodeAt(0),
    from: 'alice',
    thread: id,
    preview: '<b>hi</b>',
    sentAt: now - 5000,
    dueAt: now - 1000,
    requiresAck: true,
    recipients,
    overdue,
    deadLettered: false,
    resolved: false,
    pending: true,
    awaitingAck: recipients.some((r) => r.awaitingAck),
  });
  const acked = entry('A', false, [
    {
      recipient: 'bob',
      state: 'acked',
      sessionsPushed: 1,
      overdue: false,
      awaitingAck: false,
      lastReceipt: { kind: 'ack', by: 'bob', session: 'bob-1', node: 'n1', at: now - 2000 },
    },
  ]);
  const late = entry('B', true, [
    { recipient: 'eve', state: 'queued', sessionsPushed: 0, overdue: true, awaitingAck: true },
  ]);
  const snapshot = {
    node: 'n1',
    workspace: '/w',
    now,
    store: { ok: true, dir: '/s', archived: 0 },
    sessions: [],
    coverage: [],
    pending: [acked, late],
    overdue: { count: 1, oldestSentAt: late.sentAt, ids: ['B'] },
    messages: [late, acked],
    people: [],
    openCount: 2,
    pendingCount: 2,
    awaitingAckCount: 1,
  } satisfies Snapshot;

  it('counts what waits for an ACK apart from what is ACKed and waits for a result', () => {
    const m = panelModel({ kind: 'running', pid: 42 }, snapshot, 'all', 'maria');
    // A was ACKed by bob and waits for its result: "2 waiting for an ACK" said otherwise.
    assert.deepEqual(m.waiting, { ack: 1, result: 1 });
  });

  it('a window on a headless `handoff hub` says so, not that it runs in another window', () => {
    const m = panelModel(
      { kind: 'running', pid: 42, shared: true, person: false, headless: true },
      snapshot,
      'all',
      'maria',
    );
    assert.match(m.hub.detail, /^The Handoff hub runs as the command “handoff hub” \(pid 42\), outside VS Code/);
    assert.doesNotMatch(m.hub.detail, /another window/);
    const other = panelModel({ kind: 'running', pid: 42, shared: true, person: false }, snapshot, 'all', 'maria');
    assert.match(other.hub.detail, /runs in another window \(pid 42\)/);
  });

  it('labels each receipt state with who and when, and flags the overdue recipient', () => {
    const m = panelModel({ kind: 'running', pid: 42 }, snapshot, 'all', 'maria');
    const bob = m.events.find((e) => e.id === 'A')!.recipients[0];
    assert.match(bob.label, /^ACK · \d\d:\d\d:\d\d$/);
    assert.match(bob.detail, /ack by bob, written from its MCP session, session bob-1, node n1/);
    assert.equal(bob.tone, 'ok');
    const eve = m.events.find((e) => e.id === 'B')!.recipients[0];
    assert.equal(eve.label, 'queued · no live session');
    assert.equal(eve.icon, 'warning');
    assert.equal(m.events.find((e) => e.id === 'A')!.awaitingAck, false);
    assert.equal(m.events.find((e) => e.id === 'B')!.awaitingAck, true);
    assert.equal(m.events[0].preview, '<b>hi</b>', 'text is passed through as text; the view never parses it');
  });

  it("the status bar shows the hub's count of handoffs awaiting an ACK, and a surfaced one with its path", () => {
    const onlyAcked = {
      ...snapshot,
      pending: [acked],
      overdue: { count: 0, ids: [] },
      messages: [acked],
      awaitingAckCount: 0,
    } satisfies Snapshot;
    assert.equal(
      statusView({ kind: 'running', pid: 42 }, onlyAcked, now).text,
      '$(check-all) Handoff',
      'nothing awaiting an ACK',
    );
    const seen = entry('C', false, [
      {
        recipient: 'bob',
        state: 'surfaced',
        sessionsPushed: 1,
        overdue: false,
        awaitingAck: true,
        surfaced: { session: 's-1', node: 'n1', at: now - 1000, path: 'hook', via: 'claude PostToolUse' },
      },
    ]);
    const waiting = {
      ...snapshot,
      pending: [seen],
      overdue: { count: 0, ids: [] },
      messages: [seen],
      awaitingAckCount: 1,
    } satisfies Snapshot;
    assert.equal(statusView({ kind: 'running', pid: 42 }, waiting, now).text, '$(clock) Handoff 1');
    // A hub without a Linux power (no /proc: macOS, Windows) says so in the tooltip, whatever else it shows.
    const weaker = "process proof off (no /proc): a hook's or a bridge's identity is stated, not proven";
    assert.match(
      statusView({ kind: 'running', pid: 42 }, { ...waiting, weaker: [weaker] }, now).tooltip,
      /Weaker here than on Linux:\n• process proof off/,
    );
    assert.doesNotMatch(statusView({ kind: 'running', pid: 42 }, waiting, now).tooltip, /Weaker/);
    const bob = panelModel({ kind: 'running', pid: 42 }, waiting, 'all', 'maria').events[0].recipients[0];
    assert.match(bob.label, /^surfaced · claude \d\d:\d\d:\d\d$/);
    assert.match(bob.detail, /surfaced in the model's context by claude PostToolUse \(hook\)/);
  });

  it('a woken recipient says so until its hook surfaces the handoff; the tooltip names the pane', () => {
    const woken = entry('D', false, [
      {
        recipient: 'bob',
        state: 'pushed',
        sessionsPushed: 1,
        overdue: false,
        awaitingAck: true,
        woken: { at: now - 500, how: 'tmux', terminal: '%3' },
      },
    ]);
    const m = panelModel(
      { kind: 'running', pid: 42 },
      { ...snapshot, pending: [woken], messages: [woken] },
      'all',
      'maria',
    );
    const bob = m.events[0].recipients[0];
    assert.match(bob.label, /^woken · tmux \d\d:\d\d:\d\d$/);
    assert.equal(bob.icon, 'bell');
    assert.match(bob.detail, /woken at .*: a prompt typed into its idle session \(tmux pane %3\)/);
    assert.match(bob.detail, /pushed to 1 session/);
  });

  it('a recipient woken in an editor terminal names the terminal on the row and in the tooltip', () => {
    const woken = entry('E', false, [
      {
        recipient: 'bob',
        state: 'queued',
        sessionsPushed: 0,
        overdue: false,
        awaitingAck: true,
        woken: { at: now - 500, how: 'terminal', terminal: 'codex bob' },
      },
    ]);
    const m = panelModel(
      { kind: 'running', pid: 42 },
      { ...snapshot, pending: [woken], messages: [woken] },
      'all',
      'maria',
    );
    const bob = m.events[0].recipients[0];
    assert.match(bob.label, /^woken · terminal codex bob \d\d:\d\d:\d\d$/);
    assert.match(bob.detail, /a prompt typed into its idle session \(the editor's integrated terminal "codex bob"\)/);
  });

  it("says the hub line in words, with the node and pid in its tooltip, and a result's summary on its recipient", () => {
    const m = panelModel({ kind: 'running', pid: 42 }, snapshot, 'all', 'maria');
    assert.equal(m.hub.detail, "Running on this repository's hub");
    assert.doesNotMatch(m.hub.detail, /pid|n1/);
    assert.match(m.hub.tooltip ?? '', /^hub n1 · pid 42/);
    const done = entry('F', false, [
      {
        recipient: 'bob',
        state: 'done',
        sessionsPushed: 1,
        overdue: false,
        awaitingAck: false,
        lastReceipt: {
          kind: 'result',
          outcome: 'done',
          summary: 'merged <b>#12</b>',
          by: 'bob',
          session: 'b',
          node: 'n1',
          at: now,
        },
      },
    ]);
    const row = panelModel({ kind: 'running', pid: 42 }, { ...snapshot, messages: [done] }, 'all', 'maria').events[0];
    assert.equal(row.recipients[0].summary, 'merged <b>#12</b>', 'as text: the view never parses it');
  });

  it('filters to the overdue items when the status bar asks', () => {
    const m = panelModel({ kind: 'running', pid: 42 }, snapshot, 'overdue', 'maria');
    assert.deepEqual(
      m.events.map((e) => e.id),
      ['B'],
    );
    assert.equal(m.pending.length, 2, 'the pending ledger is not filtered');
  });

  it('says why the hub is down', () => {
    const m = panelModel(
      { kind: 'down', reason: 'The hub was killed (SIGKILL).', restarting: true },
      undefined,
      'all',
      'maria',
    );
    assert.equal(m.hub.state, 'down');
    assert.equal(m.hub.detail, 'The hub was killed (SIGKILL). Restarting…');
  });

  it('a refused send reads as the person would say it: no JSON-RPC wrapper, no agent tool to run', () => {
    const text = refusalText(
      'reviewer',
      'Request handoff/send failed with message: No identity "reviewer" has ever connected to this hub or been announced by another node, so nothing was sent. Known identities: bob. Names match exactly; list_peers shows them.',
    );
    assert.equal(
      text,
      'Handoff NOT sent to reviewer: No identity "reviewer" has ever connected to this hub or been announced by another node, so nothing was sent. Known identities: bob. Names match exactly; the Send Handoff picker lists them.',
    );
  });
});

// The person at the editor over the real wire: a hub process run as the editor runs it (its stdio
// is the window's own channel, which writes the person's receipts), a control connection on the
// socket as a second window uses it (presence, inbox, sends), and a real agent
// (MCP SDK client over the real bridge). Presence in list_peers lasts as long as the window's
// connection; the inbox, receipts and a reply travel as they do from the panel; a silent recipient
// escalates to the person on the hub's real timer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, PresenceRequest, ReceiptRequest, SendRequest, SnapshotRequest } from '../../extension/protocol/control';
import { connectControl, type ControlClient } from '../../extension/shared/controlClient';
import { connectAgent, type Agent } from '../helpers/agent';
import { startHub, type HubProcess } from '../helpers/hubProcess';
import { waitFor, waitUntil } from '../helpers/wait';

describe('the person at the editor, over a real hub', () => {
  let hub: HubProcess;
  let builder: Agent;
  let window: ControlClient;
  const peer = async (name: string) =>
    ((await builder.ok('list_peers')).peers as any[]).find((p) => p.identity === name);
  const maria = async () => (await call(window.connection, SnapshotRequest)).people.find((p) => p.identity === 'maria');

  before(async () => {
    hub = await startHub({ env: { HANDOFF_TICK_MS: '100' }, editor: true });
    builder = await connectAgent({ socket: hub.socket, name: 'builder', session: 'builder-1' });
    window = await connectControl(hub.socket, 'vscode');
  });
  after(async () => {
    await builder?.close();
    window?.close();
    await hub?.stop();
  });

  it('a window makes its person addressable and live in list_peers, and a bad report is refused', async () => {
    assert.equal(await peer('maria'), undefined);
    await assert.rejects(
      window.connection.sendRequest(PresenceRequest.method, { identity: 'no spaces', focused: true }),
      /identity must be an identity name/,
    );
    assert.equal(await peer('no spaces'), undefined, 'nothing recorded');
    await window.connection.sendRequest(PresenceRequest.method, { identity: 'maria', focused: true });
    const p = await peer('maria');
    assert.equal(p.live, true);
    assert.deepEqual(
      { ...p.person, last_focused: typeof p.person.last_focused },
      { at_editor: true, live: true, windows: 1, last_focused: 'string' },
    );
    const text = (await builder.call('list_peers')).content as { type: string; text?: string }[];
    assert.match(text[0].text ?? '', /maria: a person at the editor, live/);
  });

  it('a handoff to the person is in their inbox; read, reply and done travel back to the agent, the reply pushed once', async () => {
    const answer = await builder.call('send_handoff', { to: 'maria', body: 'approve the migration', sla_seconds: 600 });
    const sent = answer.structuredContent as any;
    // A person has no model: the sender reads where it waits, not "when it calls inbox".
    assert.equal(sent.recipients[0].seen_when, 'in_their_editor');
    const said = (answer.content as { text?: string }[])[0].text ?? '';
    assert.match(said, /maria .*a person: it waits in the inbox of their Handoff view until they open it/);
    assert.doesNotMatch(said, /calls inbox/);
    const item = await waitUntil(
      async () => (await maria())?.inbox.find((i) => i.id === sent.message_id),
      10_000,
      'the inbox item',
    );
    assert.equal(item.unread, true);
    // Receipts are the person's: from the editor window that runs the hub, not the socket.
    await hub.editor!.sendRequest(ReceiptRequest.method, { as: 'maria', id: sent.message_id, kind: 'read' });
    assert.equal((await maria())?.unread, 0, 'read is hub state: every window sees it');
    const before = builder.pushes.length;
    const reply = (await window.connection.sendRequest(SendRequest.method, {
      as: 'maria',
      to: ['builder'],
      body: 'approved',
      thread: sent.thread,
      replyTo: sent.message_id,
    })) as { message_id: string };
    // A second push of the reply would come before the push of a later message: send one, wait for it.
    const marker = (await window.connection.sendRequest(SendRequest.method, {
      as: 'maria',
      to: ['builder'],
      body: 'a later message',
    })) as { message_id: string };
    await waitFor(
      () => builder.pushes.some((x) => x.meta.message_id === marker.message_id),
      10_000,
      'the later message pushed',
    );
    assert.equal(builder.pushes.filter((x) => x.meta.message_id === reply.message_id).length, 1, 'pushed once');
    assert.equal(builder.pushes.length, before + 2, 'the reply and the later message, nothing else');
    const got = await builder.ok('get_message', { message_id: reply.message_id });
    assert.deepEqual([got.reply_to, got.thread, got.from], [sent.message_id, sent.thread, 'maria']);
    await hub.editor!.sendRequest(ReceiptRequest.method, {
      as: 'maria',
      id: sent.message_id,
      kind: 'result',
      outcome: 'done',
      summary: 'approved for tonight',
    });
    const d = (await builder.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
    assert.deepEqual(
      d.receipts.map((r: any) => [r.kind, r.by, r.outcome ?? null]),
      [
        ['read', 'maria', null],
        ['result', 'maria', 'done'],
      ],
    );
    assert.equal(
      (await maria())?.inbox.some((i) => i.id === sent.message_id),
      false,
      'done: out of the inbox',
    );
  });

  it('a recipient silent past its chase escalates once to the person, on the real timer', async () => {
    const bob = await connectAgent({ socket: hub.socket, name: 'bob', session: 'bob-1' });
    await bob.close(); // known, then gone: its mail waits unacknowledged
    const sent = await builder.ok('send_handoff', { to: 'bob', body: 'review PR #7', sla_seconds: 1 });
    const escalation = (of: string) =>
      waitUntil(
        async () => (await maria())?.inbox.find((i) => i.escalation?.of === of),
        15_000,
        `the escalation of ${of}`,
      );
    const esc = await escalation(sent.message_id);
    assert.equal(esc.escalation?.silent, 'bob');
    assert.match(esc.preview, /^Escalation: bob has not acknowledged a handoff from builder\./);
    // More periods pass: a handoff sent now escalates two periods on, on the same timer, by when
    // the first has had two more chances to escalate again.
    const later = await builder.ok('send_handoff', { to: 'bob', body: 'review PR #8', sla_seconds: 1 });
    await escalation(later.message_id);
    assert.equal(
      (await maria())?.inbox.filter((i) => i.escalation?.of === sent.message_id).length,
      1,
      'escalated once',
    );
    const entry = (await builder.ok('pending')).pending.find((e: any) => e.id === sent.message_id);
    assert.deepEqual(
      [entry.recipients[0].escalated.to, entry.recipients[0].escalated.messageId],
      ['maria', esc.id],
      'the ledger says escalated, to whom',
    );
    const receipts = (await builder.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
    assert.equal(receipts.escalated.to, 'maria');
    assert.equal(Date.parse(receipts.escalated.at), esc.sentAt, 'and when: the escalation was sent then');
  });

  it("the person is gone from list_peers when the window's connection closes", async () => {
    window.close();
    await waitUntil(async () => !(await peer('maria'))?.person, 10_000, 'maria to leave');
    const p = await peer('maria');
    assert.equal(p.live, false);
    assert.equal(p.person, undefined);
  });
});

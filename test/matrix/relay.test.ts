// The Matrix side of the bus without a homeserver: name resolution across nodes, outbox decisions,
// the wire format round trip, recovery by replay, config errors, and lazy loading of the SDK.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decideSend, DEFAULT_LIMITS } from '../../extension/hub/bus/decide';
import { BusError } from '../../extension/hub/bus/errors';
import { emptyState, type BusEvent, type Message, type OutboxEntry } from '../../extension/hub/bus/model';
import { RecentSends } from '../../extension/hub/bus/recentSends';
import { apply } from '../../extension/hub/bus/reduce';
import { outboxFor } from '../../extension/hub/bus/relay';
import { loadMatrixConfig, MatrixConfigError } from '../../extension/hub/matrix/config';
import {
  BATCH_KEY,
  batchEvent,
  localMessage,
  outboxEvent,
  readBatch,
  readMessage,
  readReaction,
  readReceipt,
  readReply,
} from '../../extension/hub/matrix/wire';
import { personCommand, personIdentity, personUser } from '../../extension/hub/matrix/person';
import { sessionLabel } from '../../extension/hub/presence/sessions';
import { eventMessageId } from '../../extension/hub/matrix/personEvents';
import { loadNodeKey, signWire, verifyWire } from '../../extension/hub/matrix/keys';
import { DIST, NODE, tempDir } from '../helpers/hubProcess';

const T0 = 1_700_000_000_000;

function world(node: string, names: string[]) {
  const s = emptyState(node);
  for (const name of names) apply(s, { type: 'identity', name, at: T0, roles: [] });
  return s;
}

function send(state: ReturnType<typeof world>, to: string[], from = 'alice') {
  let n = 0;
  return decideSend(
    state,
    { to, body: 'b' },
    {
      caller: { identity: from, session: 's1', node: state.node },
      now: T0,
      newId: () => `01JD3V7W2K8Q5X9Y4Z6A1B${String(n++).padStart(4, '0')}`,
      nextSeq: () => ++state.seq,
      liveIdentities: () => new Set(),
      recent: new RecentSends(),
      limits: DEFAULT_LIMITS,
    },
  );
}

describe('names across nodes', () => {
  const s = world('nodeA', ['alice', 'bob', 'bob@nodeB', 'carol@nodeC', 'carol@nodeD']);

  it('an unqualified name held by one node resolves to it', () => {
    const d = send(world('nodeA', ['alice', 'dave@nodeB']), ['dave']);
    assert.equal(d.kind, 'new');
    assert.deepEqual(d.kind === 'new' && d.message.recipients, ['dave@nodeB']);
  });

  it('an unqualified name on several nodes is an error listing the qualified options', () => {
    for (const [name, options] of [
      ['bob', ['bob@nodeA', 'bob@nodeB']],
      ['carol', ['carol@nodeC', 'carol@nodeD']],
    ] as const) {
      assert.throws(
        () => send(s, [name]),
        (e: BusError) =>
          e.code === 'ambiguous_identity' && JSON.stringify(e.details.options) === JSON.stringify(options),
      );
    }
  });

  it("a qualified name is exact; this node's own qualifier means the local identity", () => {
    const local = send(s, ['bob@nodeA']);
    assert.deepEqual(local.kind === 'new' && local.message.recipients, ['bob']);
    const remote = send(s, ['bob@nodeB']);
    assert.deepEqual(remote.kind === 'new' && remote.message.recipients, ['bob@nodeB']);
    assert.throws(
      () => send(s, ['bob@nodeZ']),
      (e: BusError) => e.code === 'unknown_identity',
    );
  });
});

describe('outbox decisions and recovery', () => {
  it('a send to a remote recipient gets an outbox entry in the same commit; a local one does not', () => {
    const s = world('nodeA', ['alice', 'bob', 'bob@nodeB']);
    const d = send(s, ['bob@nodeB', 'bob@nodeA']);
    assert.equal(d.kind, 'new');
    const m = (d as { message: Message }).message;
    const extra = outboxFor(s, [{ type: 'sent', message: m }]);
    assert.equal(extra.length, 1);
    assert.equal(extra[0].type === 'outboxed' && extra[0].txnId, `handoff.${m.id}`);
    assert.deepEqual(
      outboxFor(s, [
        {
          type: 'sent',
          message: { ...(send(world('nodeA', ['alice', 'bob']), ['bob']) as { message: Message }).message },
        },
      ]),
      [],
    );
  });

  it("a local recipient's receipt for a remote sender goes back; a remote receipt does not echo", () => {
    const s = world('nodeB', ['bob']);
    const m: Message = {
      id: '01JD3V7W2K8Q5X9Y4Z6A1B0001',
      seq: 1,
      from: 'alice@nodeA',
      address: ['bob'],
      recipients: ['bob'],
      thread: 't',
      body: 'b',
      attachments: [],
      requiresAck: true,
      slaMs: 1000,
      ttlMs: 10_000,
      sentAt: T0,
      sentBySession: 's',
      node: 'nodeA',
      origin: { room: '!r:x', eventId: '$e', sender: '@a:x' },
    };
    apply(s, { type: 'sent', message: m });
    const ack: BusEvent = {
      type: 'receipt',
      id: m.id,
      recipient: 'bob',
      receipt: { kind: 'ack', by: 'bob', session: 'b1', node: 'nodeB', at: T0 + 5 },
    };
    const [entry] = outboxFor(s, [ack]);
    assert.ok(
      entry.type === 'outboxed' &&
        entry.item.kind === 'receipt' &&
        entry.item.refEventId === '$e' &&
        entry.item.sender === 'alice@nodeA',
    );
    assert.deepEqual(outboxFor(s, [{ type: 'sent', message: m }]), [], 'an ingested message is not relayed again');
  });

  it('replaying the journal lands on the same outbox, relay marks and sync position', () => {
    const s = world('nodeA', ['alice', 'bob@nodeB']);
    const m = (send(s, ['bob']) as { message: Message }).message;
    const events: BusEvent[] = [{ type: 'sent', message: m }, ...outboxFor(s, [{ type: 'sent', message: m }])];
    const m2 = (send(s, ['bob'], 'alice') as { message: Message }).message;
    events.push({ type: 'sent', message: { ...m2, id: '01JD3V7W2K8Q5X9Y4Z6A1B9999', body: 'c' } });
    events.push(...outboxFor(s, [events[2]]));
    events.push({ type: 'relayed', txnId: `handoff.${m.id}`, eventId: '$one', at: T0 + 1 });
    events.push({ type: 'synced', since: 's42', room: '!r:x', lastEventId: '$one' });
    const a = emptyState('nodeA');
    const b = emptyState('nodeA');
    for (const e of events) apply(a, e);
    for (const e of JSON.parse(JSON.stringify(events)) as BusEvent[]) apply(b, e);
    assert.deepEqual(
      JSON.parse(JSON.stringify(a)),
      JSON.parse(JSON.stringify(b)),
      'the journal (JSON) replays to the same state',
    );
    assert.deepEqual(Object.keys(a.relay!.outbox), ['handoff.01JD3V7W2K8Q5X9Y4Z6A1B9999']);
    assert.equal(a.relay!.outbox['handoff.01JD3V7W2K8Q5X9Y4Z6A1B9999'].order, 1);
    assert.deepEqual(a.hot[m.id].relayed, { eventId: '$one', at: T0 + 1 });
    assert.equal(a.relay!.since, 's42');
    assert.equal(a.relay!.rooms['!r:x'].lastEventId, '$one');
  });

  it('a batch is fixed before it is sent; relayed takes all its members, a split frees them; replay lands the same', () => {
    const s = world('nodeA', ['alice', 'bob@nodeB']);
    const events: BusEvent[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const m = {
        ...(send(s, ['bob']) as { message: Message }).message,
        id: `01JD3V7W2K8Q5X9Y4Z6A1B000${i}`,
        body: `b${i}`,
      };
      ids.push(m.id);
      events.push({ type: 'sent', message: m }, ...outboxFor(s, [{ type: 'sent', message: m }]));
    }
    const txn = (i: number) => `handoff.${ids[i]}`;
    events.push({ type: 'batched', txnId: `batch.${txn(0)}`, members: [txn(0), txn(1)] });
    events.push(
      { type: 'batched', txnId: 'batch.again', members: [txn(1), txn(2)] },
      { type: 'unbatched', txnId: 'batch.again' },
    );
    const a = emptyState('nodeA');
    for (const e of events.slice(0, -1)) apply(a, e);
    assert.deepEqual(a.relay!.batches!['batch.again'], [txn(2)], 'an entry belongs to one batch at most');
    apply(a, events.at(-1)!);
    assert.deepEqual({ ...a.relay!.batches }, { [`batch.${txn(0)}`]: [txn(0), txn(1)] }, 'a split batch is gone');
    apply(a, { type: 'relayed', txnId: `batch.${txn(0)}`, eventId: '$batch', at: T0 + 1 });
    assert.deepEqual(Object.keys(a.relay!.outbox), [txn(2)]);
    assert.deepEqual(
      [ids[0], ids[1]].map((id) => a.hot[id].relayed?.eventId),
      ['$batch', '$batch'],
    );
    assert.deepEqual({ ...a.relay!.batches }, {});
    const b = emptyState('nodeA');
    for (const e of JSON.parse(
      JSON.stringify([...events, { type: 'relayed', txnId: `batch.${txn(0)}`, eventId: '$batch', at: T0 + 1 }]),
    ) as BusEvent[])
      apply(b, e);
    assert.deepEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
  });

  it('a node is bound by its first claim only', () => {
    const s = emptyState('nodeA');
    apply(s, { type: 'node-bound', node: 'nodeB', user: '@b:x', at: 1 });
    apply(s, { type: 'node-bound', node: 'nodeB', user: '@m:x', at: 2 });
    assert.deepEqual({ ...s.relay!.nodes }, { nodeB: { user: '@b:x', at: 1 } });
  });

  it("a remote handoff's first push and first surfacing go back to its sender as progress, once", () => {
    const s = world('nodeB', ['bob']);
    const m: Message = {
      id: '01JD3V7W2K8Q5X9Y4Z6A1B0001',
      seq: 1,
      from: 'alice@nodeA',
      address: ['bob'],
      recipients: ['bob'],
      thread: 't',
      body: 'b',
      attachments: [],
      requiresAck: true,
      slaMs: 1000,
      ttlMs: 10_000,
      sentAt: T0,
      sentBySession: 's',
      node: 'nodeA',
      origin: { room: '!r:x', eventId: '$e', sender: '@a:x' },
    };
    apply(s, { type: 'sent', message: m });
    const push = (session: string): BusEvent => ({
      type: 'pushed',
      id: m.id,
      recipient: 'bob',
      push: { session, node: 'nodeB', at: T0 + 1, kind: 'live' },
    });
    const out = outboxFor(s, [push('b1'), push('b2')]);
    assert.equal(out.length, 1, 'one progress entry for two sessions pushed at once');
    assert.ok(
      out[0].type === 'outboxed' &&
        out[0].item.kind === 'progress' &&
        out[0].item.step === 'pushed' &&
        out[0].item.refEventId === '$e',
    );
    apply(s, push('b1'));
    assert.deepEqual(outboxFor(s, [push('b3')]), [], 'later pushes stay local');
    const surfaced: BusEvent = {
      type: 'surfaced',
      id: m.id,
      recipient: 'bob',
      surfacing: { session: 'b1', node: 'nodeB', at: T0 + 2, path: 'hook', via: 'claude PostToolUse', replayed: false },
    };
    const [sf] = outboxFor(s, [surfaced]);
    assert.ok(
      sf.type === 'outboxed' &&
        sf.item.kind === 'progress' &&
        sf.item.step === 'surfaced' &&
        sf.item.via === 'claude PostToolUse',
    );
    const { type, content } = outboxEvent({ txnId: 'p', order: 0, queuedAt: T0, item: (sf as any).item }, 'nodeB');
    assert.equal(type, 'org.handoff.progress', 'hidden from people');
    const w = readReceipt(content);
    assert.ok(typeof w !== 'string' && w.kind === 'surfaced' && w.by === 'bob@nodeB' && w.path === 'hook');
  });

  it('a refused event fails only the remote deliveries, visibly', () => {
    const s = world('nodeA', ['alice', 'bob', 'bob@nodeB']);
    const m = (send(s, ['bob@nodeB', 'bob@nodeA']) as { message: Message }).message;
    apply(s, { type: 'sent', message: m });
    for (const e of outboxFor(s, [{ type: 'sent', message: m }])) apply(s, e);
    apply(s, { type: 'relay-failed', txnId: `handoff.${m.id}`, reason: 'too large', at: T0 + 1 });
    assert.equal(s.hot[m.id].deliveries['bob@nodeB'].state, 'failed');
    assert.equal(s.hot[m.id].deliveries['bob@nodeB'].failure?.reason, 'too large');
    assert.equal(s.hot[m.id].deliveries.bob.state, 'queued');
  });
});

describe('wire format', () => {
  const m: Message = {
    id: '01JD3V7W2K8Q5X9Y4Z6A1B0001',
    seq: 3,
    from: 'alice',
    address: ['bob'],
    recipients: ['bob@nodeB', 'carol@nodeC'],
    thread: 't',
    body: 'do <it>',
    attachments: [],
    requiresAck: true,
    slaMs: 1000,
    ttlMs: 10_000,
    sentAt: T0,
    sentBySession: 's1',
    node: 'nodeA',
  };

  it('a handoff reads back on the recipient node with its local names and origin', () => {
    const { type, content } = outboxEvent(
      { txnId: 'x', order: 0, queuedAt: T0, item: { kind: 'message', message: m } },
      'nodeA',
    );
    assert.equal(type, 'm.room.message');
    const w = readMessage(content);
    assert.ok(typeof w !== 'string');
    const local = localMessage(
      w,
      'nodeB',
      { event_id: '$e', type, sender: '@a:x', origin_server_ts: T0, content },
      '!r:x',
    );
    assert.equal(local?.from, 'alice@nodeA');
    assert.deepEqual(local?.recipients, ['bob']);
    assert.deepEqual(local?.address, ['bob', 'carol@nodeC']);
    assert.deepEqual(local?.origin, { room: '!r:x', eventId: '$e', sender: '@a:x' });
    assert.equal(
      localMessage(w, 'nodeZ', { event_id: '$e', type, sender: '@a:x', origin_server_ts: T0, content }, '!r:x'),
      undefined,
      'not for nodeZ',
    );
  });

  it('names sessions by label on the wire, never by key: a key in the room would let anyone take the session over', () => {
    const key = 'b-3f6c1e2a-secret-session-key';
    const sent = outboxEvent(
      { txnId: 'x', order: 0, queuedAt: T0, item: { kind: 'message', message: { ...m, sentBySession: key } } },
      'nodeA',
    );
    const receipt = outboxEvent(
      {
        txnId: 'r',
        order: 1,
        queuedAt: T0,
        item: {
          kind: 'receipt',
          messageId: m.id,
          sender: 'alice@nodeA',
          receipt: { kind: 'ack', by: 'bob', session: key, node: 'nodeB', at: T0 + 5 },
        },
      },
      'nodeB',
    );
    const progress = outboxEvent(
      {
        txnId: 'p',
        order: 2,
        queuedAt: T0,
        item: {
          kind: 'progress',
          messageId: m.id,
          sender: 'alice@nodeA',
          recipient: 'bob',
          step: 'pushed',
          session: key,
          node: 'nodeB',
          at: T0 + 1,
        },
      },
      'nodeB',
    );
    for (const e of [sent, receipt, progress]) assert.ok(!JSON.stringify(e).includes(key), JSON.stringify(e));
    // Still the field every node reads, so an older node takes it as it took a key.
    const w = readMessage(sent.content);
    assert.ok(typeof w !== 'string', String(w));
    assert.equal(w.session, sessionLabel(key));
    const local = localMessage(
      w,
      'nodeB',
      { event_id: '$e', type: sent.type, sender: '@a:x', origin_server_ts: T0, content: sent.content },
      '!r:x',
    );
    assert.equal(local?.sentBySession, sessionLabel(key));
    for (const e of [receipt, progress]) {
      const r = readReceipt(e.content);
      assert.ok(typeof r !== 'string', String(r));
      assert.equal(r.session, sessionLabel(key));
      assert.equal(sessionLabel(r.session), sessionLabel(key), 'shown on the receiving node by the same label');
    }
  });

  it('refuses malformed or inconsistent events', () => {
    const good = outboxEvent(
      { txnId: 'x', order: 0, queuedAt: T0, item: { kind: 'message', message: m } },
      'nodeA',
    ).content;
    const bad = (patch: Record<string, unknown>) =>
      readMessage({ ...good, 'org.handoff.message': { ...(good['org.handoff.message'] as object), ...patch } });
    assert.equal(bad({ id: 'nope' }), 'bad id: not a message id');
    assert.equal(bad({ from: 'alice@nodeX' }), 'bad from: a sender must be a name on the node it claims');
    assert.equal(bad({ to: ['bob'] }), 'bad to.0: not qualified (name@node)');
    assert.equal(bad({ body: 'x'.repeat(70_000) }), 'bad body: over 64 KiB');
    assert.equal(readMessage({ body: 'hello' }), 'no handoff data');
    assert.equal(
      readReceipt({
        'org.handoff.receipt': {
          message_id: m.id,
          sender: 'alice@nodeA',
          kind: 'ack',
          by: 'bob@nodeB',
          node: 'nodeC',
          session: 's',
          at: 1,
        },
      }),
      "bad by: only the recipient's node writes its receipt",
    );
    let deep: unknown = 'x';
    for (let i = 0; i < 20; i++) deep = [deep];
    assert.match(String(bad({ attachments: deep })), /nested deeper than 8/, 'a depth limit before any schema');
  });

  it('a batch reads back in order; a bad entry is reported and the others still count', () => {
    const entry = (i: number): OutboxEntry => ({
      txnId: `t${i}`,
      order: i,
      queuedAt: T0,
      item: { kind: 'message', message: { ...m, id: `01JD3V7W2K8Q5X9Y4Z6A1B000${i}` } },
    });
    const { content } = batchEvent([entry(1), entry(2), entry(3)], 'nodeA');
    (content[BATCH_KEY] as any[])[1].message.id = 'bad';
    const items = readBatch(content);
    assert.ok(Array.isArray(items));
    assert.deepEqual(
      items.map((i) => (i.kind === 'message' ? i.wire.id : i.kind)),
      ['01JD3V7W2K8Q5X9Y4Z6A1B0001', 'bad', '01JD3V7W2K8Q5X9Y4Z6A1B0003'],
    );
    assert.match(String(content.body), /^3 entries from nodeA \(3 handoffs, 0 receipts\)/);
    assert.equal(typeof readBatch({ [BATCH_KEY]: Array(201).fill({}) }), 'string', 'at most 200 entries');
  });

  it('a handoff to a person mentions them and says how to answer', () => {
    const toPerson = { ...m, recipients: ['carol@matrix:example.org'] };
    const { content } = outboxEvent(
      { txnId: 'x', order: 0, queuedAt: T0, item: { kind: 'message', message: toPerson } },
      'nodeA',
    );
    assert.deepEqual(content['m.mentions'], { user_ids: ['@carol:example.org'] });
    assert.match(String(content.body), /^Handoff from alice@nodeA to @carol:example.org \(needs an ACK\)/);
    assert.match(String(content.body), /react ✅ to ACK/);
  });

  it('people: replies, thread replies, reactions and the short grammar', () => {
    assert.equal(personIdentity('@carol:example.org'), 'carol@matrix:example.org');
    assert.equal(personIdentity('@carol:localhost:8448'), 'carol@matrix:localhost:8448');
    assert.equal(personIdentity('@_bot=x:example.org'), undefined, 'not writable as an exact name');
    assert.equal(personUser('carol@matrix:example.org'), '@carol:example.org');
    assert.equal(personUser('bob@nodeB'), undefined);
    const reply = readReply({
      msgtype: 'm.text',
      body: '> <@a:x> Handoff from alice\n> more\n\nOn it, but which branch?',
      'm.relates_to': { 'm.in_reply_to': { event_id: '$h' } },
    });
    assert.deepEqual(reply, { targets: ['$h'], text: 'On it, but which branch?' });
    const thread = readReply({
      msgtype: 'm.text',
      body: 'thread answer',
      'm.relates_to': {
        rel_type: 'm.thread',
        event_id: '$root',
        is_falling_back: true,
        'm.in_reply_to': { event_id: '$last' },
      },
    });
    assert.deepEqual(thread, { targets: ['$root', '$last'], text: 'thread answer' });
    assert.equal(readReply({ msgtype: 'm.text', body: 'just chatting' }), 'not a reply to anything');
    assert.deepEqual(readReaction({ 'm.relates_to': { rel_type: 'm.annotation', event_id: '$h', key: '✅️' } }), {
      eventId: '$h',
      meaning: 'ack',
    });
    assert.match(
      String(readReaction({ 'm.relates_to': { rel_type: 'm.annotation', event_id: '$h', key: '🎉' } })),
      /means nothing here/,
    );
    assert.deepEqual(personCommand('ACK'), { kind: 'ack' });
    assert.deepEqual(personCommand('done: merged in #12'), {
      kind: 'result',
      outcome: 'done',
      summary: 'merged in #12',
    });
    assert.deepEqual(personCommand('stuck'), { kind: 'result', outcome: 'stuck', summary: 'stuck' });
    assert.deepEqual(personCommand('rejected — not ours'), {
      kind: 'result',
      outcome: 'rejected',
      summary: 'not ours',
    });
    assert.equal(personCommand('doneness is relative'), undefined);
    assert.equal(personCommand('please look at it again'), undefined);
  });

  it('a node signs its wire data; the signature survives the room and breaks with any change', () => {
    const dir = tempDir('nodekey');
    const key = loadNodeKey(dir);
    assert.equal(loadNodeKey(dir).publicKey, key.publicKey, 'the key is kept in the store folder');
    assert.equal(statSync(join(dir, 'matrix-node-key.pem')).mode & 0o777, 0o600);
    const { content } = outboxEvent(
      { txnId: 'x', order: 0, queuedAt: T0, item: { kind: 'message', message: m } },
      'nodeA',
      (w) => signWire(key, w),
    );
    const raw = JSON.parse(JSON.stringify(content['org.handoff.message'])); // as another hub reads it
    assert.ok(verifyWire(key.publicKey, raw));
    assert.ok(
      verifyWire(key.publicKey, Object.fromEntries(Object.entries(raw).reverse())),
      'key order does not matter',
    );
    assert.ok(!verifyWire(key.publicKey, { ...raw, body: 'do <it> now' }), 'a changed body');
    assert.ok(!verifyWire(loadNodeKey(tempDir('other')).publicKey, raw), "another node's key");
    assert.ok(
      !verifyWire('not a key', raw) &&
        !verifyWire(key.publicKey, { ...raw, sig: 42 }) &&
        !verifyWire(key.publicKey, null),
    );
    const again = outboxEvent(
      { txnId: 'x', order: 0, queuedAt: T0, item: { kind: 'message', message: m } },
      'nodeA',
      (w) => signWire(key, w),
    );
    assert.deepEqual(again, { type: 'm.room.message', content }, 'a retry sends the same bytes');
  });

  it('an event id makes the same message id every time, a valid ULID', () => {
    const id = eventMessageId(T0, '$e\nalice');
    assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(id, eventMessageId(T0, '$e\nalice'));
    assert.notEqual(id, eventMessageId(T0, '$f\nalice'));
  });
});

describe('configuration and loading', () => {
  it('says what is wrong without quoting the token', () => {
    const dir = tempDir('mxcfg');
    const secret = 'syt_SECRET_TOKEN_123';
    const file = join(dir, 'm.json');
    writeFileSync(file, `{"homeserver": "http://h", "room": "#r:h", "accessToken": "${secret}", oops}`);
    assert.throws(
      () => loadMatrixConfig(file, {}),
      (e: Error) => e instanceof MatrixConfigError && /not valid JSON/.test(e.message) && !e.message.includes(secret),
    );
    writeFileSync(file, JSON.stringify({ homeserver: 'ftp://h', room: '#r:h', accessToken: secret }));
    assert.throws(() => loadMatrixConfig(file, {}), /homeserver must be an http\(s\) URL/);
    writeFileSync(file, JSON.stringify({ homeserver: 'http://h', room: 'r', accessToken: secret }));
    assert.throws(() => loadMatrixConfig(file, {}), /room must be/);
    writeFileSync(
      file,
      JSON.stringify({ homeserver: 'http://h', room: '#r:h', allowedSenders: ['bob'], accessToken: secret }),
    );
    assert.throws(() => loadMatrixConfig(file, {}), /allowedSenders/);
    writeFileSync(file, JSON.stringify({ homeserver: 'http://h', room: '#r:h' }));
    assert.throws(() => loadMatrixConfig(file, {}), /no access token/);
    assert.equal(loadMatrixConfig(file, { HANDOFF_MATRIX_TOKEN: secret })?.tokenSource, 'env HANDOFF_MATRIX_TOKEN');
    assert.equal(loadMatrixConfig(undefined, {}), undefined, 'no config: Matrix off');
  });

  it('a headless hub with a broken Matrix config exits non-zero and says why', () => {
    const dir = tempDir('mxbad');
    const file = join(dir, 'm.json');
    writeFileSync(file, JSON.stringify({ homeserver: 'http://h', room: 'nope', accessToken: 'syt_x' }));
    const r = spawnSync(
      NODE,
      [
        join(DIST, 'hub.js'),
        '--workspace',
        dir,
        '--store',
        join(dir, 's'),
        '--socket',
        join(dir, 'h.sock'),
        '--matrix-config',
        file,
      ],
      { encoding: 'utf8', timeout: 20_000 },
    );
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /room must be a room id/);
    assert.ok(!r.stderr.includes('syt_x'));
  });

  it('matrix-js-sdk lives in dist/matrix.js only: a local hub never parses it', () => {
    const hub = readFileSync(join(DIST, 'hub.js'), 'utf8');
    const matrix = readFileSync(join(DIST, 'matrix.js'), 'utf8');
    assert.ok(matrix.includes('FetchHttpApi'), 'the SDK is in the Matrix bundle');
    assert.ok(!hub.includes('FetchHttpApi') && !hub.includes('matrix-js-sdk'), 'and not in the hub bundle');
  });
});

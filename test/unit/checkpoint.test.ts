// The checkpoint document (state.json) across layouts: the one-line document earlier versions
// wrote still loads, and what is written now is the same JSON, a line per open message, read back
// whole however its lines fall across read chunks.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { bodyOf, withBody } from '../../extension/hub/bus/body';
import { emptyState, type BusEvent, type BusState, type HotMessage, type Message } from '../../extension/hub/bus/model';
import { apply, isSettled } from '../../extension/hub/bus/reduce';
import { Store } from '../../extension/hub/store/store';
import { tempDir } from '../helpers/hubProcess';
import { plainState } from '../helpers/plainState';

const opts = { idempotencyWindowMs: 24 * 3_600_000 };
const T0 = Date.now();

function message(i: number, body: string): Message {
  const id = `01JD3V7W2K8Q5X9Y4Z${String(i).padStart(8, '0')}`;
  return {
    id,
    seq: i,
    from: 'alice',
    address: ['bob'],
    recipients: ['bob'],
    thread: id,
    body,
    attachments: [],
    requiresAck: true,
    slaMs: 600_000,
    ttlMs: 86_400_000,
    sentAt: T0 + i,
    sentBySession: 's',
    node: 'n',
  };
}

function hot(m: Message, pushed = false): HotMessage {
  return {
    message: m,
    deliveries: {
      bob: {
        recipient: 'bob',
        state: pushed ? 'read' : 'queued',
        pushes: pushed ? [{ session: 'b1', node: 'n', at: T0, kind: 'live' }] : [],
        receipts: pushed ? [{ kind: 'read', by: 'bob', session: 'b1', node: 'n', at: T0 }] : [],
      },
    },
  };
}

/** The state as earlier versions held it: `hot` third, as emptyState made it. */
function oldState(hots: HotMessage[]): BusState {
  return {
    node: 'n',
    seq: hots.length,
    hot: Object.fromEntries(hots.map((h) => [h.message.id, h])),
    identities: {
      alice: { name: 'alice', firstSeen: T0, lastSeen: T0, roles: [] },
      bob: { name: 'bob', firstSeen: T0, lastSeen: T0, roles: ['reviewer'] },
    },
    coverage: { bob: { addressed: hots.length, acked: 0, ackLatencies: [] } },
    idempotency: { 'alice\nk1': { id: hots[0].message.id, at: T0 } },
  };
}

/** How many open messages hold their body by reference, left in the checkpoint. */
const leftInFile = (state: BusState) =>
  Object.values(state.hot).filter((h) => typeof h.message.body === 'number').length;

describe('the checkpoint document', () => {
  it('a one-line document from an earlier version loads; the next checkpoint writes the same JSON a line per open message', async () => {
    const dir = tempDir('checkpoint-old');
    const bodies = ['plain', 'two\nlines and "quotes" \\ and a tab\t', 'multi-byte: é ✓ 😀', '{"hot":{}}}'];
    const state = oldState(bodies.map((b, i) => hot(message(i + 1, b), i === 1)));
    writeFileSync(join(dir, 'state.json'), JSON.stringify({ format: 1, journalN: 7, state }), { mode: 0o600 });
    const store = await Store.open(dir, 'n', opts);
    assert.deepEqual(plainState(store.state), plainState(state));
    await store.close(); // checkpoints
    const text = readFileSync(join(dir, 'state.json'), 'utf8');
    const { checkpoint, ...read } = JSON.parse(text);
    assert.deepEqual(read, { format: 1, journalN: 7, state: plainState(state) }, 'any JSON reader reads it as before');
    assert.match(checkpoint, /^[0-9a-f]{16}$/, 'and its id, which its open index names');
    assert.equal(
      text.trimEnd().split('\n').length,
      bodies.length + 2,
      'a header, a line per open message, a closing line',
    );
    const again = await Store.open(dir, 'n', opts);
    assert.equal(leftInFile(again.state), bodies.length, 'every body is left in the document');
    assert.deepEqual(
      plainState(again.state),
      plainState(state),
      'and reads back exactly: escapes, quotes, multi-byte characters',
    );
    await again.close();
  });

  it('a line layout whose lines do not start with the body (as written before bodies stayed in it) loads; the next checkpoint leaves them in the file', async () => {
    const dir = tempDir('checkpoint-lines');
    const hots = ['one', 'two "quoted"', 'three ✓'].map((b, i) => hot(message(i + 1, b)));
    const { hot: byId, ...rest } = oldState(hots);
    const outline = JSON.stringify({ format: 1, journalN: 3, state: { hot: {}, ...rest } });
    const split = outline.indexOf('"hot":{') + '"hot":{'.length;
    const lines = Object.entries(byId).map(
      ([id, h], i, all) => `${JSON.stringify(id)}:${JSON.stringify(h)}${i < all.length - 1 ? ',' : ''}`,
    );
    writeFileSync(
      join(dir, 'state.json'),
      `${outline.slice(0, split)}\n${lines.join('\n')}\n${outline.slice(split)}\n`,
      { mode: 0o600 },
    );
    const store = await Store.open(dir, 'n', opts);
    assert.equal(leftInFile(store.state), 0, 'found nowhere the loader looks: kept in memory');
    assert.deepEqual(plainState(store.state), plainState(oldState(hots)));
    await store.close();
    const again = await Store.open(dir, 'n', opts);
    assert.equal(leftInFile(again.state), hots.length);
    assert.deepEqual(plainState(again.state), plainState(oldState(hots)));
    await again.close();
  });

  it('a document edited by hand (pretty-printed) loads', async () => {
    const dir = tempDir('checkpoint-pretty');
    const state = oldState([hot(message(1, 'edited'))]);
    writeFileSync(join(dir, 'state.json'), JSON.stringify({ format: 1, journalN: 1, state }, null, 2), { mode: 0o600 });
    const store = await Store.open(dir, 'n', opts);
    assert.deepEqual(plainState(store.state), plainState(state));
    assert.equal(leftInFile(store.state), 0, 'a document not in the line layout keeps its bodies in memory');
    await store.close();
  });

  it('a document of several read chunks, multi-byte characters across their edges, reads back whole', async () => {
    const dir = tempDir('checkpoint-chunks');
    // 3 bytes per ✓ and 4 per 😀: over 2 MiB of bodies, so lines and characters straddle the 1 MiB chunks.
    const sent = Array.from({ length: 1000 }, (_, i) => message(i + 1, `${i} ${'✓😀'.repeat(300 + (i % 7))}`));
    // Bodies left in the file are read back through a 64 KiB window: some longer than it, escapes everywhere.
    for (const [i, n] of [
      [1001, 30_000],
      [1002, 11_000],
      [1003, 1],
    ])
      sent.push(message(i, `${'x\\"\n'.repeat(n)}\\`));
    const first = await Store.open(dir, 'n', opts);
    await first.commit(sent.map((m) => ({ type: 'sent', message: m })));
    await first.close();
    assert.ok(readFileSync(join(dir, 'state.json')).length > 2 * 1024 * 1024);
    const again = await Store.open(dir, 'n', opts);
    assert.equal(Object.keys(again.state.hot).length, sent.length);
    assert.equal(leftInFile(again.state), sent.length);
    for (const m of sent.slice().reverse())
      assert.equal(bodyOf(again.state.hot[m.id].message), m.body, 'read back in any order');
    await again.commit([{ type: 'sent', message: message(5000, 'new ✓') }]);
    await again.close(); // the next document copies every body from this one
    const third = await Store.open(dir, 'n', opts);
    assert.equal(leftInFile(third.state), sent.length + 1);
    for (const m of [...sent, message(5000, 'new ✓')]) assert.equal(bodyOf(third.state.hot[m.id].message), m.body);
    await third.close();
  });

  it('checkpoints while running leave bodies in the new document, read back from it at once and after the next', async () => {
    const dir = tempDir('checkpoint-running');
    const store = await Store.open(dir, 'n', { ...opts, minCheckpointBytes: 64 * 1024 });
    const sent: Message[] = [];
    const readAll = () => sent.every((m) => bodyOf(store.state.hot[m.id].message) === m.body);
    let checkpoints = 0;
    for (let i = 1; checkpoints < 3; i++) {
      const m = message(i, `running ${i} ${'✓'.repeat(i % 300)}`);
      sent.push(m);
      const before = leftInFile(store.state);
      await store.commit([{ type: 'sent', message: m }]);
      if (leftInFile(store.state) > before) {
        checkpoints++;
        assert.ok(readAll(), `every body reads back right after checkpoint ${checkpoints}`);
      }
    }
    assert.ok(leftInFile(store.state) > sent.length / 2);
    await store.close();
  });

  it('a checkpoint writes anew every open message an event changed since the last (each kind of change), and copies the rest as they stand', async () => {
    const at = T0 + 1000;
    const remote = (i: number): Message => ({
      ...message(i, `to another node ${i}`),
      address: ['bob', 'carol@far'],
      recipients: ['bob', 'carol@far'],
    });
    const ids = (i: number) => message(i, '').id;
    const change = (i: number): BusEvent[] => {
      const id = ids(i);
      const receipt = (kind: 'read' | 'ack' | 'result') => ({
        type: 'receipt' as const,
        id,
        recipient: 'bob',
        receipt: {
          kind,
          by: 'bob',
          session: 'b1',
          node: 'n',
          at,
          ...(kind === 'result' ? { outcome: 'stuck' as const, summary: 'blocked' } : {}),
        },
      });
      return [
        [{ type: 'pushed', id, recipient: 'bob', push: { session: 'b1', node: 'n', at, kind: 'live' } }],
        [{ type: 'offered', id, recipient: 'bob', at }],
        [
          {
            type: 'surfaced',
            id,
            recipient: 'bob',
            surfacing: { session: 'b1', node: 'n', at, path: 'hook', via: 'claude PostToolUse', replayed: false },
          },
        ],
        [receipt('read')],
        [receipt('ack')],
        [receipt('result')],
        [{ type: 'failed', id, recipient: 'bob', reason: 'the session died', at }],
        [{ type: 'chased', id, recipient: 'bob', at }],
        [{ type: 'escalated', id, recipient: 'bob', to: 'lead', at, messageId: ids(900) }],
        [
          { type: 'resolved', id, resolution: { by: 'person', at, note: 'done by hand' } },
          { type: 'pushed', id, recipient: 'bob', push: { session: 'b2', node: 'n', at, kind: 'live' } },
        ],
        [{ type: 'relayed', txnId: `t${i}`, eventId: `$e${i}`, at }],
        [{ type: 'relay-failed', txnId: `t${i}`, reason: 'refused', at }],
      ][i - 1] as BusEvent[];
    };
    const KINDS = 12;
    const UNCHANGED = 30;
    const sends: BusEvent[] = [];
    for (let i = 1; i <= KINDS + UNCHANGED; i++) {
      const m = i === 11 || i === 12 ? remote(i) : message(i, `body ${i} ${'✓'.repeat(i)}`);
      sends.push({ type: 'sent', message: m });
      if (i === 11 || i === 12)
        sends.push({ type: 'outboxed', txnId: `t${i}`, at: T0, item: { kind: 'message', message: m } });
    }
    const changes = Array.from({ length: KINDS }, (_, k) => change(k + 1)).flat();
    // What the state must be: every event applied to a fresh state, nothing read back from a file.
    const oracle = emptyState('n');
    for (const e of [...sends, ...changes]) apply(oracle, structuredClone(e));
    // A resolved message settles: the checkpoint moves it to the archive, and the rest stay open.
    const asWritten = (state: BusState) =>
      Object.fromEntries(
        Object.entries(state.hot)
          .filter(([, h]) => !isSettled(h, Date.now()))
          .map(([id, h]) => [id, { ...h, message: withBody(h.message) }]),
      );

    for (const path of ['committed while running', 'replayed from the journal at open']) {
      const dir = tempDir('checkpoint-changed');
      const first = await Store.open(dir, 'n', opts);
      await first.commit(sends);
      await first.close(); // every line written anew; every body left in the document
      const running = await Store.open(dir, 'n', opts);
      for (let i = 1; i <= KINDS; i++) await running.commit(change(i));
      let store = running;
      if (path === 'replayed from the journal at open') store = await Store.open(dir, 'n', opts); // as after a crash: the changes are in the journal only
      assert.ok(leftInFile(store.state) >= UNCHANGED, 'the unchanged bodies are still in the document');
      await store.close(); // the checkpoint: the changed written anew, the rest copied
      const again = await Store.open(dir, 'n', opts);
      assert.deepEqual(asWritten(again.state), asWritten(oracle), `${path}: the document holds every change`);
      assert.equal(leftInFile(again.state), KINDS + UNCHANGED - 1, 'every open body left in the document');
      assert.ok(await again.isArchived(ids(10)), 'the resolved one archived');
      await again.close();
    }
  });

  it('a document cut short is refused, not loaded in part', async () => {
    const dir = tempDir('checkpoint-cut');
    const first = await Store.open(dir, 'n', opts);
    await first.commit([1, 2, 3].map((i) => ({ type: 'sent', message: message(i, `body ${i}`) })));
    await first.close();
    const lines = readFileSync(join(dir, 'state.json'), 'utf8').split('\n');
    const cut = lines.slice(0, 3).join('\n');
    writeFileSync(join(dir, 'state.json'), cut);
    await assert.rejects(Store.open(dir, 'n', opts), {
      name: 'StoreDamage',
      message: new RegExp(`state\\.json is damaged at byte ${Buffer.byteLength(cut)} \\(it ends before its last line`),
    });
  });
});

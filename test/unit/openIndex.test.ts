// A start from the checkpoint's open index (store/openIndex.ts): the hub's open set and mail index
// come from the index, every message is left unparsed until read, and what it reads is what a
// start that parses the whole document gives. An index that does not name the document beside it
// (a crash between the two writes, a torn or foreign file) is not used.
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MailIndex } from '../../extension/hub/bus/mailIndex';
import type { BusEvent, BusState, Message, Surfacing } from '../../extension/hub/bus/model';
import { Store } from '../../extension/hub/store/store';
import { tempDir } from '../helpers/hubProcess';
import { plainState } from '../helpers/plainState';

const opts = { idempotencyWindowMs: 24 * 3_600_000 };
const T0 = Date.now();
const N = 60;

function message(i: number): Message {
  const id = `01JD3V7W2K8Q5X9Y4Z${String(i).padStart(8, '0')}`;
  const recipients = i % 3 === 0 ? ['bob', 'carol'] : ['bob'];
  return {
    id,
    seq: i,
    from: 'alice',
    address: recipients,
    recipients,
    thread: id,
    body: `handoff ${i}: "quoted", multi-byte é ✓`,
    attachments: [],
    requiresAck: i % 4 !== 0,
    slaMs: 600_000,
    ttlMs: 86_400_000,
    sentAt: T0 + i,
    sentBySession: 's',
    node: 'n',
  };
}

const stamp = (by: string, session: string, at = T0) => ({ by, session, node: 'n', at });

/** Surfaced by a Claude hook in bob's session b1, under that CLI session if given. */
const hookInB1 = (cliSession?: string): Surfacing => ({
  session: 'b1',
  node: 'n',
  at: T0,
  path: 'hook',
  via: 'claude PostToolUse',
  replayed: false,
  ...(cliSession ? { cliSession } : {}),
});

/** Messages in every state the mail index tells apart: pushed, read, surfaced (with and without a CLI session), ACKed, result, resolved. */
function events(): BusEvent[] {
  const out: BusEvent[] = [];
  for (let i = 1; i <= N; i++) out.push({ type: 'sent', message: message(i) });
  for (let i = 1; i <= N; i++) {
    const id = message(i).id;
    if (i % 2 === 0)
      out.push({ type: 'pushed', id, recipient: 'bob', push: { session: 'b1', node: 'n', at: T0, kind: 'live' } });
    if (i % 5 === 0)
      out.push({ type: 'receipt', id, recipient: 'bob', receipt: { kind: 'read', ...stamp('bob', 'b1') } });
    if (i % 7 === 0)
      out.push({
        type: 'surfaced',
        id,
        recipient: 'bob',
        surfacing: hookInB1(i % 14 === 0 ? 'claude:x' : undefined),
      });
    if (i % 11 === 0)
      out.push({ type: 'receipt', id, recipient: 'bob', receipt: { kind: 'ack', ...stamp('bob', 'b1') } });
    if (i % 13 === 0)
      out.push({
        type: 'receipt',
        id,
        recipient: 'bob',
        receipt: { kind: 'result', outcome: 'done', ...stamp('bob', 'b1') },
      });
    if (i % 17 === 0) out.push({ type: 'resolved', id, resolution: { by: 'alice', at: T0 } });
  }
  return out;
}

/** An index file with some of its header's fields changed. */
function withHeader(file: Buffer, change: Record<string, unknown>): Buffer {
  const nl = file.indexOf(0x0a);
  const header = { ...JSON.parse(file.toString('utf8', 0, nl)), ...change };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), file.subarray(nl + 1)]);
}

/** A store with the messages, closed with a checkpoint and its open index. */
async function filled(): Promise<string> {
  const dir = tempDir('open-index');
  const store = await Store.open(dir, 'n', opts);
  await store.commit(events());
  await store.close();
  return dir;
}

/** What the mail index answers, for every identity and session the messages name. */
function answers(mail: MailIndex, state: BusState): unknown {
  const ids = (hots: { message: { id: string } }[]) => hots.map((h) => h.message.id);
  return ['bob', 'carol'].map((who) => ({
    open: ids(mail.openFor(state, who)),
    newest: ids(mail.newestFor(state, who, 1000)),
    unacked: ids(mail.unackedFor(state, who)),
    summary: mail.unackedSummary(state, who, 3).count,
    unread: mail.unreadCount(who),
    waiting: mail.hasWaiting(who),
    seen: mail.seenInSession(who, 'b1'),
    agents: ['claude:x', 'claude:y'].map((cli) => mail.agentSessionOf(who, cli)),
    toSurface: ['b1', 'b2'].map((s) => {
      const { items, count } = mail.unsurfaced(state, who, s, new Set(), 1000);
      return { items: ids(items), count };
    }),
  }));
}

/** A start that parses the document whole: the same folder with its index taken away. */
async function parsedWhole(dir: string): Promise<Store> {
  const copy = tempDir('open-index-whole');
  for (const f of ['state.json', 'journal.ndjson', 'journal.2.ndjson']) copyFileSync(join(dir, f), join(copy, f));
  cpSync(join(dir, 'history'), join(copy, 'history'), { recursive: true });
  const store = await Store.open(copy, 'n', opts);
  assert.equal(store.unparsed, 0);
  return store;
}

describe('a start from the open index', () => {
  it('parses no message line, gives the same open set, mail index and messages as a whole parse, and parses a message once when it is read', async () => {
    const dir = await filled();
    const whole = await parsedWhole(dir);
    const store = await Store.open(dir, 'n', opts);
    assert.equal(store.unparsed, store.openCount, 'every open message is left in the document');
    assert.ok(store.openCount > 0);
    assert.deepEqual([...store.openIds()], [...whole.openIds()], 'the open set, in order');
    const mail = store.mailIndex();
    assert.equal(store.unparsed, store.openCount, 'building them read no message');
    assert.deepEqual(mail, MailIndex.of(whole.state), 'the mail index, list by list');

    const first = [...store.openIds()][0];
    assert.equal(store.state.hot[first].message.seq, 1);
    assert.equal(store.unparsed, store.openCount - 1, 'a read parses that message only');
    assert.equal(store.state.hot[first], store.state.hot[first], 'once, and keeps it');
    assert.deepEqual(answers(mail, store.state), answers(MailIndex.of(whole.state), whole.state));
    assert.deepEqual(
      plainState(store.state),
      plainState(whole.state),
      'every message reads as the whole parse reads it',
    );
    assert.equal(store.unparsed, 0);
    await whole.close();
    await store.close();
  });

  it("the journal's events after the checkpoint apply to the unparsed messages they name, and the mail index follows them", async () => {
    const dir = await filled();
    const before = await Store.open(dir, 'n', opts);
    const ids = [...before.openIds()];
    // Events in the journal, no checkpoint after them (as a kill -9 leaves it).
    await before.commit([
      { type: 'receipt', id: ids[0], recipient: 'bob', receipt: { kind: 'ack', ...stamp('bob', 'b1') } },
      { type: 'receipt', id: ids[1], recipient: 'bob', receipt: { kind: 'read', ...stamp('bob', 'b1') } },
      { type: 'resolved', id: ids[2], resolution: { by: 'alice', at: T0 } },
      // Waiting already at the checkpoint, surfaced since: seen in that session from now on.
      {
        type: 'surfaced',
        id: ids[3],
        recipient: 'bob',
        surfacing: hookInB1('claude:y'),
      },
      { type: 'sent', message: message(N + 1) },
    ]);
    const whole = await parsedWhole(dir);
    const store = await Store.open(dir, 'n', opts);
    assert.ok(store.unparsed > 0 && store.unparsed < store.openCount, 'only what the events named was parsed');
    assert.deepEqual([...store.openIds()], [...whole.openIds()]);
    assert.deepEqual(answers(store.mailIndex(), store.state), answers(MailIndex.of(whole.state), whole.state));
    assert.deepEqual(plainState(store.state), plainState(whole.state));
    await whole.close();
    await store.close();
    await before.close(); // its files, left open as a kill -9 leaves them
    assert.ok(
      (await store.isArchived(ids[2])) && (await whole.isArchived(ids[2])),
      'the message resolved since is settled: archived at the next checkpoint',
    );
  });

  it('an index of no open message: the messages the journal adds after it are open, in the mail index, and in the next checkpoint', async () => {
    const dir = tempDir('open-index-empty');
    await (await Store.open(dir, 'n', opts)).close(); // an index with nothing in it
    const before = await Store.open(dir, 'n', opts);
    await before.commit([
      { type: 'sent', message: message(1) },
      { type: 'sent', message: message(2) },
    ]);
    const store = await Store.open(dir, 'n', opts); // as after a kill -9
    assert.deepEqual([...store.openIds()], [message(1).id, message(2).id]);
    assert.equal(store.mailIndex().unackedFor(store.state, 'bob').length, 2);
    await store.close(); // a checkpoint, the journal emptied
    const again = await Store.open(dir, 'n', opts);
    assert.deepEqual([...again.openIds()], [message(1).id, message(2).id], 'nothing acknowledged is lost');
    await again.close();
    await before.close();
  });

  it('an index that names another document, a torn one and a foreign one are not used: the start parses the document', async () => {
    const dir = await filled();
    const index = join(dir, 'state.json.index');
    const older = readFileSync(index);
    // A later checkpoint whose index was not written (a crash between the two): the older index names the older document.
    const store = await Store.open(dir, 'n', opts);
    await store.commit([{ type: 'sent', message: message(N + 1) }]);
    await store.close();
    const whole = await parsedWhole(dir);
    const expected = plainState(whole.state);
    await whole.close();
    // The document before's index, its size made to match this document's: only its checkpoint id tells them apart.
    // Each made from the index that names the document as it is then (every start below checkpoints anew).
    const cases: [string, (current: Buffer) => Buffer][] = [
      ['the document before', () => older],
      [
        'the document before, its size made to match',
        () => withHeader(older, { documentBytes: readFileSync(join(dir, 'state.json')).length }),
      ],
      ['torn', (current) => current.subarray(0, current.length - 5)],
      ['foreign', () => Buffer.from('{"magic":"handoff-open-index","version":1}\n\u0000\u0001')],
      ['claiming more records than it has bytes', (current) => withHeader(current, { count: 2 ** 50 })],
    ];
    for (const [what, made] of cases) {
      writeFileSync(index, made(readFileSync(index)));
      const again = await Store.open(dir, 'n', opts);
      assert.equal(again.unparsed, 0, `${what}: not used`);
      assert.deepEqual(plainState(again.state), expected, `${what}: the state is whole`);
      await again.close(); // writes the index anew
      assert.ok(readFileSync(index).length > 100);
    }
  });

  it('a document edited by hand (an open message taken out) is parsed whole: its index is not used', async () => {
    const dir = await filled();
    const doc = join(dir, 'state.json');
    const lines = readFileSync(doc, 'utf8').split('\n');
    const open = lines.length - 3; // a first line, a line per open message, a last line, and after its newline nothing
    lines.splice(3, 1); // a message's line, its comma with it: still the same JSON shape
    writeFileSync(doc, lines.join('\n'));
    const store = await Store.open(dir, 'n', opts);
    assert.equal(store.unparsed, 0, 'not used');
    assert.equal(store.openCount, open - 1, 'the document as it is: one open message fewer');
    await store.close();
  });

  it('a document cut short with its index beside it is refused, not loaded in part', async () => {
    const dir = await filled();
    const doc = join(dir, 'state.json');
    truncateSync(doc, readFileSync(doc).length - 40);
    await assert.rejects(Store.open(dir, 'n', opts), {
      name: 'StoreDamage',
      message: /state\.json is damaged at byte \d+/,
    });
  });
});

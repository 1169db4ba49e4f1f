// search_history through the real bridge from an MCP client, and `handoff search` through the CLI,
// on a real hub whose store holds settled handoffs in sealed history segments (each with its
// index) and open ones: an agent finds its own mail, open and settled, and never another's.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { connectAgent, plainBody, type Agent } from '../helpers/agent';
import { DIST, NODE, startHub, tempDir, type HubProcess } from '../helpers/hubProcess';

const run = promisify(execFile);
const SETTLED = 300;
/** Bodies a search must find by another form of a word, or another spelling of the same text. */
const FORMS = [
  'the reviewer quotes the spec',
  'the linter ignores generated files',
  'lunch at the cafe\u0301 on the corner', // é decomposed: e + U+0301
  'the office in Zu\u0308rich', // ü decomposed
  'the flight to İstanbul',
];

/** alice → bob about the parser (odd), carol → dave about a secret parser plan (even), each done and archived. */
async function settledStore(storeDir: string): Promise<void> {
  const hub = new Hub({
    workspace: tempDir('search-fill-ws'),
    storeDir,
    node: 'n',
    store: { segmentBytes: 16 * 1024, minCheckpointBytes: 16 * 1024 },
  });
  await hub.start();
  for (const who of ['alice', 'bob', 'carol', 'dave']) await hub.remember(who);
  // Word forms and Unicode, in the oldest sealed segment: found through its index, or not at all.
  for (const body of FORMS) {
    const r = await hub.send(
      { identity: 'alice', session: 'alice-fill', node: 'n' },
      { to: ['bob'], body, thread: 'round1' },
    );
    await hub.receipt({ identity: 'bob', session: 'bob-fill', node: 'n' }, r.message_id, 'result', 'done', 'done');
  }
  for (let i = 1; i <= SETTLED; i++) {
    const [from, to] = i % 2 ? ['alice', 'bob'] : ['carol', 'dave'];
    const body =
      i === 1 ? 'the very first note' : i % 2 ? `note ${i} about the parser` : `note ${i}: the secret parser plan`;
    const r = await hub.send({ identity: from, session: `${from}-fill`, node: 'n' }, { to: [to], body });
    await hub.receipt({ identity: to, session: `${to}-fill`, node: 'n' }, r.message_id, 'result', 'done', 'done');
  }
  await hub.close();
}

describe('search_history and handoff search', { timeout: 120_000 }, () => {
  let hub: HubProcess;
  let alice: Agent;
  let carol: Agent;

  before(async () => {
    const store = join(tempDir('search'), 'store');
    await settledStore(store);
    assert.ok(readdirSync(join(store, 'history')).filter((f) => f.endsWith('.idx')).length >= 3, 'sealed segments');
    hub = await startHub({ store });
    alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    carol = await connectAgent({ socket: hub.socket, name: 'carol' });
  });
  after(async () => {
    await alice?.close();
    await carol?.close();
    await hub?.stop();
  });

  it("an agent finds its own settled mail by word, newest first, opens the oldest with get_message, and finds none of another's", async () => {
    const { hits } = await alice.ok('search_history', { text: 'parser', limit: 100 });
    assert.equal(hits.length, 100);
    assert.ok(hits.every((h: { from: string; settled: boolean }) => h.from === 'alice' && h.settled));
    assert.deepEqual(
      hits.map((h: { sent_at: number }) => h.sent_at),
      hits.map((h: { sent_at: number }) => h.sent_at).sort((a: number, b: number) => b - a),
    );
    const all = await alice.ok('search_history', { from: 'alice', to: 'bob', state: 'settled', limit: 100 });
    assert.equal(all.hits.length, 100);
    const oldest = await alice.ok('search_history', { text: 'very first' });
    assert.equal(oldest.hits.length, 1, 'the first handoff, in the oldest sealed segment');
    const opened = await alice.ok('get_message', { message_id: oldest.hits[0].message_id });
    assert.equal(plainBody(opened), 'the very first note');
    assert.equal(opened.settled, true);

    for (const q of [{ text: 'secret' }, { from: 'carol' }, { to: 'dave' }, { text: 'plan parser' }])
      assert.deepEqual((await alice.ok('search_history', q)).hits, [], `alice: ${JSON.stringify(q)}`);
    const theirs = await carol.ok('search_history', { text: 'secret', limit: 5 });
    assert.equal(theirs.hits.length, 5);
    // Another agent's words: fenced, as a body is.
    assert.equal(plainBody({ body: theirs.hits[0].excerpt }), `note ${SETTLED}: the secret parser plan`);
  });

  it('an open handoff is found by word and state, and a time range narrows the search', async () => {
    const sent = await alice.ok('send_handoff', { to: 'bob', body: 'the zebra crossing in the lexer' });
    const { hits } = await alice.ok('search_history', { text: 'Zebra', state: 'open' });
    assert.deepEqual(
      hits.map((h: { message_id: string; settled: boolean }) => [h.message_id, h.settled]),
      [[sent.message_id, false]],
    );
    const future = new Date(Date.now() + 3_600_000).toISOString();
    assert.deepEqual((await alice.ok('search_history', { text: 'zebra', since: future })).hits, []);
    const bad = await alice.call('search_history', { state: 'lost' });
    assert.equal(bad.isError, true);
  });

  it("handoff search: the person sees every identity's mail, and --as narrows it to what that identity may see", async () => {
    const cli = async (...args: string[]) =>
      (await run(NODE, [join(DIST, 'cli.js'), 'search', '--hub', hub.socket, ...args])).stdout;
    const all = JSON.parse(await cli('secret', 'plan', '--limit', '3', '--json')) as {
      from: string;
      message_id: string;
    }[];
    assert.equal(all.length, 3);
    assert.ok(all.every((h) => h.from === 'carol'));
    assert.match(
      await cli('secret', '--from', 'carol', '--limit', '1'),
      new RegExp(`^${all[0].message_id} .* carol → dave \\[settled\\] note ${SETTLED}: the secret parser plan\\n$`),
    );
    assert.equal(await cli('secret', '--as', 'alice'), 'no handoff answers that search\n');
  });

  it('a word finds its forms and its other spellings, in sealed history, open mail and the CLI alike', async () => {
    const found = async (text: string) =>
      ((await alice.ok('search_history', { text, limit: 10 })).hits as { excerpt: string }[]).map((h) =>
        plainBody({ body: h.excerpt }),
      );
    assert.deepEqual(await found('quote'), [FORMS[0]], 'quote finds quotes (a stem, as FTS5 porter)');
    assert.deepEqual(await found('quoted'), [FORMS[0]]);
    assert.deepEqual(await found('ignore'), [FORMS[1]], 'ignore finds ignores');
    assert.deepEqual(await found('ignoring linters'), [FORMS[1]]);
    assert.deepEqual(await found('caf\u00e9'), [FORMS[2]], 'café composed finds it decomposed');
    assert.deepEqual(await found('Z\u00fcrich'), [FORMS[3]], 'Zürich is one word, not zu + rich');
    assert.deepEqual(await found('rich'), []);
    assert.deepEqual(await found('istanbul'), [FORMS[4]], 'İstanbul and istanbul meet');
    assert.deepEqual(await found('ISTANBUL'), [FORMS[4]]);
    assert.deepEqual(await found('gener*'), [FORMS[1]], 'word* is any word it begins');
    assert.deepEqual(await found('quota'), [], 'another word with the same start is not a form');

    const open = await alice.ok('send_handoff', { to: 'bob', body: 'Cafe\u0301s QUOTING İstanbul', thread: 'round2' });
    const hits = (await alice.ok('search_history', { text: 'café quote istanbul' })).hits as { message_id: string }[];
    assert.deepEqual(
      hits.map((h) => h.message_id),
      [open.message_id],
    );

    const cli = async (...args: string[]) =>
      JSON.parse(
        (await run(NODE, [join(DIST, 'cli.js'), 'search', '--hub', hub.socket, '--json', ...args])).stdout,
      ) as {
        thread: string;
        excerpt: string;
      }[];
    const round1 = await cli('thread:round1', '--limit', '50');
    assert.equal(round1.length, FORMS.length, 'thread: in the words, as in the editor box');
    assert.ok(round1.every((h) => h.thread === 'round1'));
    assert.deepEqual(
      (await cli('from:alice', 'thread:round1', 'quote')).map((h) => h.excerpt),
      [FORMS[0]],
    );
    await assert.rejects(
      run(NODE, [join(DIST, 'cli.js'), 'search', '--hub', hub.socket, 'thread:a', '--thread', 'b']),
      (e: { code: number; stderr: string }) => e.code === 2 && /--thread and thread: are both given/.test(e.stderr),
    );
  });
});

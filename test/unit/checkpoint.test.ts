// The checkpoint document (state.json) across layouts: the one-line document earlier versions
// wrote still loads, and what is written now is the same JSON, a line per open message, read back
// whole however its lines fall across read chunks.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { BusState, HotMessage, Message } from '../../extension/hub/bus/model';
import { Store } from '../../extension/hub/store/store';
import { tempDir } from '../helpers/hubProcess';

const opts = { idempotencyWindowMs: 24 * 3_600_000 };
const T0 = Date.now();

function message(i: number, body: string): Message {
  const id = `01JD3V7W2K8Q5X9Y4Z${String(i).padStart(8, '0')}`;
  return {
    id, seq: i, from: 'alice', address: ['bob'], recipients: ['bob'], thread: id, body, attachments: [],
    requiresAck: true, slaMs: 600_000, ttlMs: 86_400_000, sentAt: T0 + i, sentBySession: 's', node: 'n',
  };
}

function hot(m: Message, pushed = false): HotMessage {
  return {
    message: m,
    deliveries: {
      bob: {
        recipient: 'bob', state: pushed ? 'read' : 'queued',
        pushes: pushed ? [{ session: 'b1', node: 'n', at: T0, kind: 'live' }] : [],
        receipts: pushed ? [{ kind: 'read', by: 'bob', session: 'b1', node: 'n', at: T0 }] : [],
      },
    },
  };
}

/** The state as earlier versions held it: `hot` third, as emptyState made it. */
function oldState(hots: HotMessage[]): BusState {
  return {
    node: 'n', seq: hots.length,
    hot: Object.fromEntries(hots.map((h) => [h.message.id, h])),
    identities: { alice: { name: 'alice', firstSeen: T0, lastSeen: T0, roles: [] }, bob: { name: 'bob', firstSeen: T0, lastSeen: T0, roles: ['reviewer'] } },
    coverage: { bob: { addressed: hots.length, acked: 0, ackLatencies: [] } },
    idempotency: { 'alice\nk1': { id: hots[0].message.id, at: T0 } },
  };
}

const plain = (state: BusState) => JSON.parse(JSON.stringify(state)) as unknown;

describe('the checkpoint document', () => {
  it('a one-line document from an earlier version loads; the next checkpoint writes the same JSON a line per open message', async () => {
    const dir = tempDir('checkpoint-old');
    const bodies = ['plain', 'two\nlines and "quotes" \\ and a tab\t', 'multi-byte: é ✓ 😀', '{"hot":{}}}'];
    const state = oldState(bodies.map((b, i) => hot(message(i + 1, b), i === 1)));
    writeFileSync(join(dir, 'state.json'), JSON.stringify({ format: 1, journalN: 7, state }), { mode: 0o600 });
    const store = await Store.open(dir, 'n', opts);
    assert.deepEqual(plain(store.state), plain(state));
    await store.close(); // checkpoints
    const text = readFileSync(join(dir, 'state.json'), 'utf8');
    assert.deepEqual(JSON.parse(text), { format: 1, journalN: 7, state: plain(state) }, 'any JSON reader reads it as before');
    assert.equal(text.trimEnd().split('\n').length, bodies.length + 2, 'a header, a line per open message, a closing line');
    const again = await Store.open(dir, 'n', opts);
    assert.deepEqual(plain(again.state), plain(state));
    await again.close();
  });

  it('a document edited by hand (pretty-printed) loads', async () => {
    const dir = tempDir('checkpoint-pretty');
    const state = oldState([hot(message(1, 'edited'))]);
    writeFileSync(join(dir, 'state.json'), JSON.stringify({ format: 1, journalN: 1, state }, null, 2), { mode: 0o600 });
    const store = await Store.open(dir, 'n', opts);
    assert.deepEqual(plain(store.state), plain(state));
    await store.close();
  });

  it('a document of several read chunks, multi-byte characters across their edges, reads back whole', async () => {
    const dir = tempDir('checkpoint-chunks');
    // 3 bytes per ✓ and 4 per 😀: over 2 MiB of bodies, so lines and characters straddle the 1 MiB chunks.
    const sent = Array.from({ length: 1000 }, (_, i) => message(i + 1, `${i} ${'✓😀'.repeat(300 + (i % 7))}`));
    const first = await Store.open(dir, 'n', opts);
    await first.commit(sent.map((m) => ({ type: 'sent', message: m })));
    await first.close();
    assert.ok(readFileSync(join(dir, 'state.json')).length > 2 * 1024 * 1024);
    const again = await Store.open(dir, 'n', opts);
    assert.equal(Object.keys(again.state.hot).length, sent.length);
    for (const m of sent) assert.equal(again.state.hot[m.id].message.body, m.body);
    await again.close();
  });

  it('a document cut short is refused, not loaded in part', async () => {
    const dir = tempDir('checkpoint-cut');
    const first = await Store.open(dir, 'n', opts);
    await first.commit([1, 2, 3].map((i) => ({ type: 'sent', message: message(i, `body ${i}`) })));
    await first.close();
    const lines = readFileSync(join(dir, 'state.json'), 'utf8').split('\n');
    writeFileSync(join(dir, 'state.json'), lines.slice(0, 3).join('\n'));
    await assert.rejects(Store.open(dir, 'n', opts), /ends before its last line/);
  });
});

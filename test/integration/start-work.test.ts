// A hub starting on a full store does no per-message work it can leave for later, counted (not
// timed). From the checkpoint's open index (store/openIndex.ts) it parses no message at all: the
// mail index (an agent's first answer reads it) comes from the index, and each message is parsed
// when first read. Without an index (a store an earlier version wrote) every line is parsed, and
// the mail index is built on them; every read of the open-message table after that goes through a
// proxy. Either way the duplicate window (a send's) and the due times (the timer's) are filled in
// behind, a slice per turn, or by the first call that needs them before that is through; the
// ledger (the editor's summary) on first use. Measured failures: at 100 000 open they were half a
// start, then a 0.1–0.6 s stall on first use; parsing the lines was most of a 1.5 s start.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { Hub } from '../../extension/hub/hub';
import { MailIndex } from '../../extension/hub/bus/mailIndex';
import type { BusState, HotMessage } from '../../extension/hub/bus/model';
import { tempDir } from '../helpers/hubProcess';

const OPEN = 300;
const alice = { identity: 'alice', session: 'fill', node: 'start' };

async function filledStore(): Promise<{ workspace: string; storeDir: string }> {
  const base = tempDir('start-work');
  const where = { workspace: join(base, 'ws'), storeDir: join(base, 'store') };
  const hub = new Hub({ ...where, node: 'start', tickMs: 0 });
  await hub.start();
  for (const name of ['alice', 'bob']) await hub.remember(name);
  for (let i = 0; i < OPEN; i++) await hub.send(alice, { to: ['bob'], body: `handoff ${i}`, insist: true });
  await hub.close(); // a checkpoint: the next hub loads them from it
  return where;
}

/**
 * Counts reads of open messages: from the moment the mail index is built at start (a start that
 * parses the document), or from `watch` on.
 */
function countReadsAfterTheMailIndex(): {
  mailIndex: () => number;
  since: () => number;
  watch: (state: BusState) => void;
  restore: () => void;
} {
  const original = MailIndex.of.bind(MailIndex);
  let reads = 0;
  let atMailIndex = -1;
  const watch = (state: BusState) => {
    state.hot = new Proxy(state.hot, {
      get(target, key, receiver) {
        const hot = Reflect.get(target, key, receiver) as HotMessage | undefined;
        if (hot) reads++;
        return hot;
      },
    });
  };
  MailIndex.of = (state: BusState) => {
    watch(state);
    const index = original(state);
    atMailIndex = reads;
    return index;
  };
  return {
    mailIndex: () => atMailIndex,
    since: () => reads - atMailIndex,
    watch,
    restore: () => {
      MailIndex.of = original;
    },
  };
}

type Reads = ReturnType<typeof countReadsAfterTheMailIndex>;

/**
 * A hub started on a filled store, its reads of the open messages counted; `pastTheSla` moves its
 * clock past every handoff's SLA, ticks, and says how many were chased. `index`: the store keeps
 * the open index its last checkpoint wrote; else it is taken away, as a store an earlier version wrote.
 */
async function restartedOnFullStore(
  index: boolean,
  test: (hub: Hub, count: Reads, pastTheSla: () => Promise<number>) => Promise<void>,
) {
  const where = await filledStore();
  if (!index) rmSync(join(where.storeDir, 'state.json.index'));
  const count = countReadsAfterTheMailIndex();
  let now = Date.now();
  const hub = new Hub({ ...where, node: 'start', tickMs: 0, clock: () => now });
  const pastTheSla = async () => {
    now += 11 * 60_000;
    const chased = new Set<string>();
    const off = hub.onChanged((ids) => ids.forEach((id) => chased.add(id)));
    await hub.tick();
    off();
    return chased.size;
  };
  try {
    await hub.start();
    if (!index) assert.equal(count.since(), 0, 'nothing at start visits the open messages after the mail index');
    await test(hub, count, pastTheSla);
  } finally {
    count.restore();
    await hub.close();
  }
}

/** Once the backfills are through: a send finds its duplicate and reads a few messages, and the due heap holds every handoff. */
async function filledIn(hub: Hub, count: Reads, pastTheSla: () => Promise<number>): Promise<void> {
  const before = count.since();
  const again = await hub.send(alice, { to: ['bob'], body: 'handoff 7' });
  assert.equal(again.duplicate?.why, 'probable_duplicate', 'the window was filled in');
  assert.ok(count.since() - before < 20, `a send read ${count.since() - before} messages`);
  assert.equal(await pastTheSla(), OPEN, 'every restarted handoff is on the due heap');
}

describe('start-up work on a full store', () => {
  it('from the open index, no open message is parsed before start ends; the first answers parse what they show, a call that needs an index first fills it in', () =>
    restartedOnFullStore(true, async (hub, _count, pastTheSla) => {
      assert.equal(hub.journal.unparsed, OPEN, 'no message parsed at start');

      // An agent's first answer reads its mail through the index, which came without the messages.
      assert.equal(hub.unread('bob'), OPEN);
      assert.equal(hub.journal.unparsed, OPEN, 'the unread count parsed nothing');
      assert.equal(hub.inbox('bob', { limit: 5 }).length, 5);
      assert.ok(hub.journal.unparsed >= OPEN - 10, `a page of five parsed ${OPEN - hub.journal.unparsed}`);

      // The first send takes the duplicate window: the restarted messages are in it.
      const again = await hub.send(alice, { to: ['bob'], body: 'handoff 7' });
      assert.equal(again.duplicate?.why, 'probable_duplicate');

      // The timer's first tick builds the due times: past the SLA, every restarted handoff is chased.
      assert.equal(await pastTheSla(), OPEN);
    }));

  it('from the open index, the indexes left out of start are filled in behind it, every message parsed by then, and the next send reads a few', () =>
    restartedOnFullStore(true, async (hub, count, pastTheSla) => {
      await hub.backfilled;
      assert.equal(hub.journal.unparsed, 0, 'the backfills read every message');
      count.watch(hub.journal.state);
      await filledIn(hub, count, pastTheSla);
    }));

  it('without an index, after the checkpoint and the mail index, no open message is visited before start ends; a call that needs an index first fills it in', () =>
    restartedOnFullStore(false, async (hub, count, pastTheSla) => {
      assert.ok(count.mailIndex() >= OPEN, 'the mail index is built at start');

      // An agent's first answer reads its mail through the index, not the whole table.
      assert.equal(hub.unread('bob'), OPEN);
      assert.ok(count.since() < 10, `an unread count read ${count.since()} messages`);

      // The first send takes the duplicate window: the restarted messages are in it.
      const again = await hub.send(alice, { to: ['bob'], body: 'handoff 7' });
      assert.equal(again.duplicate?.why, 'probable_duplicate');

      // The timer's first tick builds the due times: past the SLA, every restarted handoff is chased.
      assert.equal(await pastTheSla(), OPEN);
    }));

  it('without an index, the indexes left out of start are filled in behind it, each open message visited once per index, and not again by the next send', () =>
    restartedOnFullStore(false, async (hub, count, pastTheSla) => {
      await hub.backfilled;
      // The duplicate window and the due times: one read each per open message.
      assert.equal(count.since(), 2 * OPEN);
      await filledIn(hub, count, pastTheSla);
    }));
});

// Retention on the real hub process: a store filled on a fake clock (two years back) with settled
// handoffs in sealed history segments and with open ones (pending, stuck, dead-lettered,
// escalated); `handoff store retention --days 30` through the CLI drops every old sealed segment
// and nothing open, logs each drop, get_message of a dropped id says retention removed it, and the
// next start opens the store as it was left.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Hub } from '../../extension/hub/hub';
import { connectControl } from '../../extension/shared/controlClient';
import { connectAgent, type Agent } from '../helpers/agent';
import { DIST, NODE, startHub, tempDir, type HubProcess } from '../helpers/hubProcess';
import { waitFor } from '../helpers/wait';

const run = promisify(execFile);
const SETTLED = 300;
const T0 = Date.UTC(2024, 0, 1);

interface Filled {
  settled: string[];
  /** When each settled one was sent. */
  sentAt: number[];
  open: Record<'pending' | 'stuck' | 'stuckNoAck' | 'deadLettered' | 'escalated' | 'escalation', string>;
}

/** On a clock two years back: four open handoffs of every kind, then SETTLED settled ones. */
async function fill(storeDir: string): Promise<Filled> {
  const clock = { t: T0 };
  const hub = new Hub({
    workspace: tempDir('retention-fill-ws'),
    storeDir,
    node: 'n',
    clock: () => clock.t,
    tickMs: 0,
    store: { segmentBytes: 16 * 1024, minCheckpointBytes: 16 * 1024 },
  });
  await hub.start();
  for (const who of ['alice', 'bob', 'maria']) await hub.remember(who);
  const alice = { identity: 'alice', session: 'a-1', node: 'n' };
  const bob = { identity: 'bob', session: 'b-1', node: 'n' };
  const week = 7 * 86_400_000;
  const send = async (
    body: string,
    more: { slaMs?: number; ttlMs?: number; escalateTo?: string; requiresAck?: boolean } = {},
  ) => (await hub.send(alice, { to: ['bob'], body, slaMs: week, ttlMs: 52 * week, ...more })).message_id;
  const pending = await send('still pending: the migration plan');
  const stuck = await send('stuck: the flaky test');
  await hub.receipt(bob, stuck, 'result', 'stuck', 'cannot reproduce');
  // No ACK asked: only the stuck outcome keeps it open (isSettled).
  const stuckNoAck = await send('stuck, no ack asked: the flaky build', { requiresAck: false });
  await hub.receipt(bob, stuckNoAck, 'result', 'stuck', 'cannot reproduce');
  const escalated = await send('escalated: approve the release', { slaMs: 60_000, escalateTo: 'maria' });
  const deadLettered = await send('dead-lettered: nobody answered', { ttlMs: 3_600_000 });
  for (let i = 0; i < 2; i++) {
    clock.t += 61_000;
    await hub.tick();
  }
  clock.t += 2 * 3_600_000;
  await hub.tick();
  const escalation = Object.values(hub.state.hot).find((h) => h.message.escalation)?.message.id;
  assert.ok(escalation, 'the escalation handoff to maria');
  assert.equal(hub.state.hot[deadLettered]?.deliveries.bob.state, 'failed');
  const settled: string[] = [];
  const sentAt: number[] = [];
  for (let i = 1; i <= SETTLED; i++) {
    clock.t += 60_000;
    const id = await send(`note ${i} about the parser`);
    await hub.receipt(bob, id, 'result', 'done', 'done');
    settled.push(id);
    sentAt.push(clock.t);
  }
  await hub.close();
  return { settled, sentAt, open: { pending, stuck, stuckNoAck, deadLettered, escalated, escalation } };
}

const indexes = (store: string) => readdirSync(join(store, 'history')).filter((f) => f.endsWith('.idx'));

describe('retention on the real hub', { timeout: 120_000 }, () => {
  let hub: HubProcess;
  let alice: Agent;
  let filled: Filled;
  const cli = (...args: string[]) =>
    run(NODE, [join(DIST, 'cli.js'), 'store', 'retention', '--hub', hub.socket, ...args]);

  before(async () => {
    const store = join(tempDir('retention'), 'store');
    filled = await fill(store);
    assert.ok(indexes(store).length >= 3, `sealed segments: ${indexes(store).join(' ')}`);
    hub = await startHub({ store });
    alice = await connectAgent({ socket: hub.socket, name: 'alice' });
  });
  after(async () => {
    await alice?.close();
    await hub?.stop();
  });

  it('keeps everything by default, and says so', async () => {
    const { stdout } = await cli();
    assert.match(stdout, /keeps: everything/);
    assert.match(stdout, /dropped so far: nothing/);
    const old = await alice.ok('get_message', { message_id: filled.settled[0] });
    assert.equal(old.settled, true);
  });

  it('handoff export writes every settled handoff in range as a JSON line, in the order they settled, then the open ones', async () => {
    const dir = tempDir('retention-export');
    const file = join(dir, 'all.jsonl');
    const exp = (...args: string[]) => run(NODE, [join(DIST, 'cli.js'), 'export', '--hub', hub.socket, ...args]);
    const r = await exp('--since', '2023-12-01', '--open', '--out', file);
    assert.match(r.stderr, new RegExp(`${SETTLED + 6} handoff\\(s\\) written to`));
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const open = Object.values(filled.open).sort();
    assert.deepEqual(
      lines.map((l) => l.message.id),
      [...filled.settled, ...open],
      'settled in the order they settled, then open by id',
    );
    assert.ok(lines.slice(0, SETTLED).every((l) => l.settled && l.deliveries[0].state === 'done' && l.archivedAt > 0));
    assert.ok(lines.slice(SETTLED).every((l) => !l.settled));
    assert.equal(lines[0].message.body, 'note 1 about the parser');

    // A range by when they were sent, to stdout; and only what one identity may see.
    const from = filled.sentAt[99];
    const until = filled.sentAt[150];
    const ranged = await exp('--since', new Date(from).toISOString(), '--until', new Date(until).toISOString());
    const ids = ranged.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).message.id);
    assert.deepEqual(ids, filled.settled.slice(99, 150));
    const marias = (await exp('--since', '2023-12-01', '--open', '--as', 'maria')).stdout.split('\n').filter(Boolean);
    assert.deepEqual(
      marias.map((l) => JSON.parse(l).message.id),
      [filled.open.escalation],
    );

    for (const [args, why] of [
      [[], /--since is needed/],
      [['--since', 'yesterday'], /--since "yesterday" is neither a date/],
      [['--since', '30d', '--until', '40d'], /--until is not after --since/],
    ] as const) {
      const e = await exp(...args).then(
        () => assert.fail(`${args.join(' ')} was accepted`),
        (x: { code: number; stderr: string }) => x,
      );
      assert.equal(e.code, 2);
      assert.match(e.stderr, why);
    }
    const again = await exp('--since', '30d', '--out', file).then(
      () => assert.fail('an existing file was overwritten'),
      (x: { code: number; stderr: string }) => x,
    );
    assert.equal(again.code, 2);
    assert.match(again.stderr, /handoff export: .* exists already, and an export never overwrites a file/);
  });

  it('hostile or invalid values are refused with a clear message, and nothing changes', async () => {
    for (const [args, why] of [
      [['--days', '0'], /--days 0: give a whole number of days from 1 to 36 500/],
      [['--days', '1.5'], /--days 1\.5: give a whole number of days/],
      [['--days', '30d'], /--days "30d" is not a number/],
      [['--days', '99999999'], /--days 99999999: give a whole number of days from 1 to 36 500/],
      [['--gib', '-1'], /--gib/],
      [['--gib=-1'], /--gib "-1" is not a number/],
      [['--gib', '0'], /--gib 0: give a size in GiB above 0/],
      [['--gib', '1e999'], /--gib "1e999" is not a number/],
      [['--keep-all', '--days', '3'], /--keep-all keeps everything/],
    ] as const) {
      const r = await cli(...args).then(
        () => assert.fail(`${args.join(' ')} was accepted`),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, why, args.join(' '));
      assert.match(r.stderr, /Nothing was changed/);
    }
    // The hub checks the request itself, whoever sends it.
    const control = await connectControl(hub.socket, 'retention-test');
    try {
      for (const set of [{ keepDays: 1.5 }, { keepDays: -1 }, { keepGiB: 0 }, { keepGiB: '5' }, { keepWeeks: 2 }])
        await assert.rejects(control.connection.sendRequest('handoff/retention', { set }), (e: Error) => {
          assert.match(e.message, /^handoff\/retention: set(\.keep\w+)? /, JSON.stringify(set));
          return true;
        });
    } finally {
      control.close();
    }
    assert.equal(existsSync(join(hub.store, 'retention.json')), false, 'nothing written');
  });

  it('--days 30 drops every old sealed segment, logs each drop, and nothing open goes', async () => {
    const before = indexes(hub.store);
    const { stdout } = await cli('--days', '30');
    assert.match(stdout, /keeps: 30 day\(s\) after settling/);
    assert.match(stdout, new RegExp(`dropped so far: \\d+ handoff\\(s\\) in ${before.length} segment\\(s\\)`));
    assert.deepEqual(indexes(hub.store), [], 'every sealed segment settled two years ago');
    assert.deepEqual(JSON.parse(readFileSync(join(hub.store, 'retention.json'), 'utf8')), { keepDays: 30 });
    assert.deepEqual(JSON.parse(readFileSync(join(hub.store, 'history', 'dropped.json'), 'utf8')).removing, []);
    await waitFor(() => hub.log().includes('history: dropped segment 1 ('));
    for (const n of before.map((f) => Number(f.slice(0, 6))))
      assert.match(hub.log(), new RegExp(`history: dropped segment ${n} \\(\\d+ handoffs, settled before 2024-`));

    const gone = await alice.call('get_message', { message_id: filled.settled[0] });
    assert.equal(gone.isError, true);
    assert.equal(gone.structuredContent.error.code, 'removed_by_retention');
    assert.match(gone.structuredContent.error.message, /retention/);

    for (const [kind, id] of Object.entries(filled.open)) {
      const as = kind === 'escalation' ? 'maria' : 'alice';
      const agent = as === 'alice' ? alice : await connectAgent({ socket: hub.socket, name: as });
      try {
        const view = await agent.ok('get_message', { message_id: id });
        assert.equal(view.settled, false, `${kind} is open`);
      } finally {
        if (agent !== alice) await agent.close();
      }
    }
  });

  it('the next start opens the store as retention left it, and drops nothing more', async () => {
    await alice.close();
    await hub.stop();
    hub = await hub.restart();
    alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    const { stdout } = await cli();
    assert.match(stdout, /keeps: 30 day\(s\)/);
    const view = await alice.ok('get_message', { message_id: filled.open.pending });
    assert.equal(view.settled, false);
    assert.doesNotMatch(hub.log(), /damaged|history: dropped/);
  });
});

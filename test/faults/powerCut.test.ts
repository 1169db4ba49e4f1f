// G4 under a power cut, not only a process kill: the real hub (in process) runs a busy scenario on
// a file system that keeps no more than POSIX promises (helpers/crashFs.ts). Before every call that
// changes the disk, the state a cut would leave is noted, with what the hub had acknowledged by
// then; afterwards each distinct crash image is opened by a new hub and checked: it opens, every
// acknowledged send, receipt and escalation is there, nothing is there twice, nothing appears that
// was never sent. Then each fsync of the store is deleted in turn (a call that does nothing) and
// the same search must find a state that loses something.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BusState } from '../../extension/hub/bus/model';
import { CrashFs, type CrashFsOptions } from '../helpers/crashFs';
import { check, hubOn, noneAcked, recorder, session, START, type Acked, type Cut } from '../helpers/powerCut';
const senders = ['alice', 'dave', 'frank'].map((identity) => ({ identity, session: `${identity}-1`, node: 'n' }));
const bob = { identity: 'bob', session: 'bob-1', node: 'n' };

/**
 * Three senders at once (group commit), the recipient reading, ACKing and reporting on what it
 * got while more arrives, handoffs that settle without an ACK, silent ones chased and escalated by
 * the timer, and checkpoints moving settled messages to the archive every 12 KiB of journal.
 */
async function scenario(options: CrashFsOptions): Promise<{ acked: Acked; cuts: Cut[]; fs: CrashFs }> {
  const acked = noneAcked();
  const { cuts, onMutation } = recorder(acked);
  const fs = new CrashFs({ ...options, onMutation });
  const clock = { t: START };
  const hub = hubOn(fs, clock);
  await hub.start();
  for (const who of ['bob', 'erin']) await hub.remember(who);
  await hub.applyRemote([{ type: 'identity', name: 'carol@far', at: START, roles: [] }]); // announced by another node
  await hub.attach(session('bob', bob.session, () => undefined));
  /** What the Matrix outbox does with what waits: one batch of it, then the homeserver's event id for the batch. */
  const relayOutbox = async (round: number) => {
    const waiting = Object.keys(hub.state.relay?.outbox ?? {});
    if (waiting.length === 0) return;
    const batch = `batch.${round}`;
    await hub.applyRemote([{ type: 'batched', txnId: batch, members: waiting }]);
    const ids = waiting.flatMap((t) =>
      hub.state.relay!.outbox[t]?.item.kind === 'message'
        ? [(hub.state.relay!.outbox[t].item as { message: { id: string } }).message.id]
        : [],
    );
    await hub.applyRemote([{ type: 'relayed', txnId: batch, eventId: `$ev${round}`, at: clock.t }]);
    acked.relayed.push(...ids);
  };
  const pad = 'p'.repeat(300);
  const receipt = async (id: string, kind: 'read' | 'ack' | 'result') => {
    const r = await hub.receipt(
      bob,
      id,
      kind,
      kind === 'result' ? 'done' : undefined,
      kind === 'result' ? 'done it' : undefined,
    );
    if (r.recorded) acked.receipts.push({ id, kind });
  };
  const escalations = (state: BusState) =>
    Object.values(state.hot)
      .filter((h) => h.message.escalation)
      .map((h) => h.message.id);
  for (let round = 0; round < 24; round++) {
    const work: Promise<unknown>[] = senders.map(async (s, k) => {
      const body = `round ${round} from ${s.identity} ${pad}`;
      acked.attempted.add(body);
      const silent = k === 2 && round % 4 === 1; // short SLA, never ACKed: chased, then escalated
      const r = await hub.send(s, {
        to: ['bob'],
        body,
        requiresAck: k !== 1,
        slaMs: silent ? 1000 : 600_000,
        escalateTo: 'erin',
        idempotencyKey: `k-${round}-${k}`,
      });
      acked.sends.push({ id: r.message_id, body });
    });
    work.push(
      (async () => {
        const body = `round ${round} to carol on another node ${pad}`;
        acked.attempted.add(body);
        const r = await hub.send(senders[0], { to: ['carol@far'], body, idempotencyKey: `far-${round}` });
        acked.sends.push({ id: r.message_id, body });
        acked.remote.push(r.message_id);
      })(),
    );
    if (round % 3 === 2) work.push(relayOutbox(round));
    // The recipient answers the round before while this one is sent.
    const previous = acked.sends.filter((s) => s.body.startsWith(`round ${round - 1} `));
    for (const s of previous) {
      if (s.body.includes('from alice'))
        work.push(
          receipt(s.id, 'read')
            .then(() => receipt(s.id, 'ack'))
            .then(() => receipt(s.id, 'result')),
        );
      if (s.body.includes('from dave')) work.push(receipt(s.id, 'result'));
    }
    await Promise.all(work);
    if (round % 4 === 3) {
      clock.t += 2500; // past the short SLAs: the first tick chases, a later one escalates
      await hub.tick();
      const before = new Set(acked.escalations);
      for (const id of escalations(hub.state)) if (!before.has(id)) acked.escalations.push(id);
    }
  }
  await hub.close();
  return { acked, cuts, fs };
}

/** The store's fsyncs, each as the call that would be deleted. */
const FSYNCS: Record<string, CrashFsOptions['skip']> = {
  'journal data (fdatasync after a batch)': (call, path) => call === 'datasync' && path.endsWith('/journal.ndjson'),
  "journal's name (fsync of the folder once created)": (call, _path, names) =>
    call === 'syncDir' && names.includes('journal.ndjson'),
  'checkpoint data (fsync before the rename)': (call, path) => call === 'sync' && path.endsWith('.tmp'),
  'checkpoint rename (fsync of the folder after it)': (call, _path, names) =>
    call === 'syncDir' && names.includes('state.json'),
  'history segment data (fdatasync after a move)': (call, path) => call === 'datasync' && path.includes('/history/'),
  "history segment's name (fsync of the folder once created)": (call, path, names) =>
    call === 'syncDir' && path.endsWith('/history') && names.some((n) => n.endsWith('.ndjson')),
  'history index data (fsync before the rename)': (call, path) => call === 'sync' && path.endsWith('.idx.new'),
  "history folder's name (fsync of the store folder once made)": (call, _path, names) =>
    call === 'syncDir' && names.includes('history'),
  "store folder's name (fsync of its parent once made)": (call, _path, names) =>
    call === 'syncDir' && names.includes('store'),
};

describe('G4: a power cut at any point', () => {
  it(
    'every crash state of a busy hub opens with all it acknowledged, once, and nothing it never took',
    { timeout: 300_000 },
    async () => {
      const { acked, cuts, fs } = await scenario({});
      assert.ok(
        acked.sends.length === 96 &&
          acked.relayed.length > 0 &&
          acked.receipts.length > 40 &&
          acked.escalations.length > 0,
        `the scenario ran: ${acked.sends.length} sends, ${acked.receipts.length} receipts, ${acked.escalations.length} escalations`,
      );
      const checkpoints = fs.calls.filter((c) => c.startsWith('rename') && c.endsWith('/state.json')).length;
      assert.ok(checkpoints >= 4, `checkpoints ran (${checkpoints})`);
      const sealed = fs.calls.filter((c) => c.startsWith('rename') && c.endsWith('.idx')).length;
      assert.ok(sealed >= 2, `history segments were sealed with their indexes (${sealed})`);
      const t = await check(acked, cuts);
      console.log(
        `# power cut: ${t.cuts} cut points, ${t.states} distinct crash states, ${checkpoints} checkpoints, ${acked.sends.length} sends (${acked.remote.length} to another node, ${acked.relayed.length} relayed) + ${acked.receipts.length} receipts + ${acked.escalations.length} escalations acknowledged; lost ${t.lost}, duplicated ${t.duplicated}, phantom ${t.phantom}, unopenable ${t.unopenable}; history catalog rebuilt ${t.catalogRebuilt}, behind by at most ${t.catalogBehind}`,
      );
      // The catalog is derived (a rebuild loses nothing) but written like the indexes: never
      // unusable after a cut, and behind by at most the segment sealed last.
      assert.deepEqual(
        { rebuilt: t.catalogRebuilt, behindAtMostOne: t.catalogBehind <= 1 },
        { rebuilt: 0, behindAtMostOne: true },
      );
      assert.deepEqual(
        { lost: t.lost, duplicated: t.duplicated, phantom: t.phantom, unopenable: t.unopenable },
        { lost: 0, duplicated: 0, phantom: 0, unopenable: 0 },
        t.failures.join('\n'),
      );
    },
  );

  for (const [fsync, skip] of Object.entries(FSYNCS)) {
    it(`without the ${fsync}, some crash state loses what was acknowledged`, { timeout: 300_000 }, async () => {
      const { acked, cuts, fs } = await scenario({ skip });
      assert.ok(
        fs.calls.some((c) => c.endsWith('(skipped)') || c.includes('(skipped:')),
        'the fsync was made, and skipped',
      );
      const t = await check(acked, cuts);
      console.log(
        `# without the ${fsync}: ${t.states} crash states, lost ${t.lost}, unopenable ${t.unopenable}; first: ${t.failures[0] ?? 'none'}`,
      );
      assert.ok(t.lost + t.unopenable > 0, `a state lost something (${t.states} states)`);
    });
  }

  it(
    'without the history catalog data (fsync before its rename), some crash state finds it unusable and rebuilds it from the indexes, losing nothing',
    { timeout: 300_000 },
    async () => {
      const { acked, cuts } = await scenario({
        skip: (call, path) => call === 'sync' && path.includes('/history/.catalog.'),
      });
      const t = await check(acked, cuts);
      console.log(
        `# without the catalog's fsync: ${t.states} crash states, catalog rebuilt in ${t.catalogRebuilt}, lost ${t.lost}`,
      );
      assert.ok(t.catalogRebuilt > 0, `a state rebuilt the catalog (${t.states} states)`);
      assert.equal(t.lost + t.unopenable, 0, t.failures.join('\n'));
    },
  );
});

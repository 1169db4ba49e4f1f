// G4 when the disk refuses, in process on a CrashFs: an fdatasync that fails (its pages dropped,
// as Linux does, or written after all), a full disk in the middle of a checkpoint, a checkpoint
// that cannot be renamed into place. Each: no ACK for what did not become durable, a clear error to
// its senders, reads answered throughout, and once the fault clears nothing acknowledged lost and
// nothing refused turning up — checked by cutting the power at every later point.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BusError } from '../../extension/hub/bus/errors';
import { connectAgent, plainBody } from '../helpers/agent';
import { CrashFs, type Fault } from '../helpers/crashFs';
import { faultRule, faultShim } from '../helpers/faultShim';
import { startHub, tempDir } from '../helpers/hubProcess';
import { check, hubOn, noneAcked, recorder, session, START } from '../helpers/powerCut';
import { skipOrFail } from '../helpers/skip.mjs';

const senders = ['alice', 'dave', 'frank'].map((identity) => ({ identity, session: `${identity}-1`, node: 'n' }));
const PAD = 'q'.repeat(400);

/** Rounds of three concurrent sends; the fault is armed before round `armAt`. Returns what happened. */
async function underFault(faults: Fault | Fault[], armAt = 4, rounds = 16) {
  const acked = noneAcked();
  const { cuts, onMutation } = recorder(acked);
  const fs = new CrashFs({ onMutation });
  const logs: string[] = [];
  const clock = { t: START };
  const hub = hubOn(fs, clock, 8 * 1024, (l) => logs.push(l));
  await hub.start();
  await hub.remember('bob');
  await hub.attach(session('bob', 'bob-1', () => undefined));
  const errors: BusError[] = [];
  let readsDuringFault = 0;
  for (let round = 0; round < rounds; round++) {
    if (round === armAt) fs.faults.push(...[faults].flat().map((f) => ({ ...f })));
    await Promise.all(
      senders.map(async (s) => {
        const body = `round ${round} from ${s.identity} ${PAD}`;
        acked.attempted.add(body);
        try {
          const r = await hub.send(s, { to: ['bob'], body, idempotencyKey: `${round}-${s.identity}` });
          acked.sends.push({ id: r.message_id, body });
        } catch (e) {
          assert.ok(e instanceof BusError, `a bus error, not ${(e as Error).stack}`);
          errors.push(e);
          acked.refused.push(body);
        }
      }),
    );
    if (fs.faults.length > 0 || round === armAt) readsDuringFault += hub.inbox('bob').length > 0 ? 1 : 0;
  }
  assert.equal(fs.faults.length, 0, `the fault was met (calls: ${fs.calls.slice(-12).join('; ')})`);
  await hub.close();
  return { acked, cuts, fs, errors, logs, readsDuringFault };
}

describe('G4: the disk says no', () => {
  for (const landed of [false, true]) {
    it(`an fdatasync of the journal fails (its writes ${landed ? 'on the disk after all' : 'dropped'}): that batch is refused, later ones land, no cut brings the refused back`, async () => {
      const r = await underFault({ call: 'datasync', path: /journal\.ndjson$/, code: 'EIO', landed });
      assert.ok(
        r.errors.length >= 1 && r.errors.length <= 3,
        `the failed batch's senders were told (${r.errors.length})`,
      );
      for (const e of r.errors) {
        assert.equal(e.code, 'store_unavailable');
        assert.match(e.message, /EIO/);
        assert.match(e.message, /Nothing was sent or recorded/);
      }
      assert.equal(r.acked.sends.length + r.errors.length, 48, 'every other send was acknowledged');
      assert.ok(r.readsDuringFault > 0, 'reads were answered');
      const t = await check(r.acked, r.cuts);
      console.log(
        `# fdatasync EIO (${landed ? 'landed' : 'dropped'}): ${r.errors.length} refused, ${r.acked.sends.length} acknowledged; ${t.states} crash states after it: lost ${t.lost}, refused yet there ${t.phantom}, unopenable ${t.unopenable}`,
      );
      assert.deepEqual(
        { lost: t.lost, phantom: t.phantom, duplicated: t.duplicated, unopenable: t.unopenable },
        { lost: 0, phantom: 0, duplicated: 0, unopenable: 0 },
        t.failures.join('\n'),
      );
    });
  }

  it('an fdatasync fails, its writes landed, and the cut of them cannot be synced either: a checkpoint of what was acknowledged replaces the journal', async () => {
    const r = await underFault([
      { call: 'datasync', path: /journal\.ndjson$/, code: 'EIO', landed: true },
      { call: 'sync', path: /journal\.ndjson$/, code: 'EIO' },
    ]);
    const i = r.fs.calls.findIndex((c, k) => c.startsWith('  failed') && r.fs.calls[k - 1].startsWith('sync '));
    assert.ok(
      i > 0 && r.fs.calls.slice(i).some((c) => /^rename .*state\.json$/.test(c)),
      `a checkpoint followed the failed cut: ${r.fs.calls.slice(i - 3, i + 8).join('; ')}`,
    );
    assert.equal(r.acked.sends.length + r.errors.length, 48);
    const t = await check(r.acked, r.cuts);
    console.log(
      `# fdatasync EIO, then the cut's fsync EIO: ${r.errors.length} refused; ${t.states} crash states: lost ${t.lost}, refused yet there ${t.phantom}`,
    );
    assert.deepEqual(
      { lost: t.lost, phantom: t.phantom, duplicated: t.duplicated, unopenable: t.unopenable },
      { lost: 0, phantom: 0, duplicated: 0, unopenable: 0 },
      t.failures.join('\n'),
    );
  });

  it('batches in flight when an fdatasync fails: every one written before the failure is refused too, though its own fdatasync "succeeds"', async () => {
    const acked = noneAcked();
    const { cuts, onMutation } = recorder(acked);
    const fs = new CrashFs({ onMutation, syncDelayMs: 4 });
    const hub = hubOn(fs, { t: START });
    await hub.start();
    await hub.remember('bob');
    const sends: Promise<void>[] = [];
    for (let i = 0; i < 24; i++) {
      if (i === 8) fs.faults.push({ call: 'datasync', path: /journal\.ndjson$/, code: 'EIO' });
      const body = `staggered ${i} ${PAD}`;
      acked.attempted.add(body);
      sends.push(
        hub.send(senders[i % 3], { to: ['bob'], body }).then(
          (r) => void acked.sends.push({ id: r.message_id, body }),
          () => void acked.refused.push(body),
        ),
      );
      await new Promise((r) => setTimeout(r, 1)); // sleep: the pace of the load, a batch per millisecond: several in flight at once
    }
    await Promise.all(sends);
    await hub.close();
    assert.ok(
      acked.refused.length >= 2,
      `the failed batch and the ones written before its failure were refused (${acked.refused.length})`,
    );
    const t = await check(acked, cuts);
    console.log(
      `# batches in flight, one fdatasync EIO: ${acked.refused.length} refused, ${acked.sends.length} acknowledged; ${t.states} crash states: lost ${t.lost}`,
    );
    assert.deepEqual(
      { lost: t.lost, phantom: t.phantom, duplicated: t.duplicated, unopenable: t.unopenable },
      { lost: 0, phantom: 0, duplicated: 0, unopenable: 0 },
      t.failures.join('\n'),
    );
  });

  it('a chase the store cannot record pushes nothing and says why', async () => {
    const fs = new CrashFs();
    const hub = hubOn(fs, { t: START });
    await hub.start();
    let delivered = 0;
    try {
      await hub.remember('bob');
      const sent = await hub.send(senders[0], { to: ['bob'], body: 'chase me' });
      await hub.attach(session('bob', 'bob-1', () => delivered++));
      const before = delivered;
      fs.faults.push({ call: 'write', path: /journal\.ndjson$/, code: 'EIO', times: 2 });
      await assert.rejects(
        hub.chase(sent.message_id, 'carol'),
        (e: BusError) => e.code === 'store_unavailable' && /EIO/.test(e.message),
      );
      assert.equal(delivered - before, 0, 'no chase went out that the journal does not hold');
      const { pushed } = await hub.chase(sent.message_id, 'carol');
      assert.equal(pushed, 1, 'once the disk answers, the chase goes out');
    } finally {
      await hub.close();
    }
  });

  it('the disk is full while a checkpoint is written: sends go on, the checkpoint is tried again, nothing lost', async () => {
    const r = await underFault({ call: 'write', path: /state\.json\.\d+\.tmp$/, code: 'ENOSPC', times: 3 });
    assert.deepEqual(r.errors, [], 'the journal had room: every send acknowledged');
    assert.ok(
      r.logs.some((l) => /checkpoint failed: ENOSPC/.test(l)),
      `the failure was logged: ${r.logs.join(' | ')}`,
    );
    assert.ok(
      r.fs.calls.some((c) => /^unlink .*\.tmp$/.test(c)),
      'the half-written checkpoint was removed',
    );
    assert.ok(
      [...r.fs.files().keys()].every((p) => !p.endsWith('.tmp')),
      'no temp file left',
    );
    const t = await check(r.acked, r.cuts);
    console.log(
      `# checkpoint ENOSPC ×3: ${r.acked.sends.length} acknowledged; ${t.states} crash states: lost ${t.lost}, unopenable ${t.unopenable}`,
    );
    assert.deepEqual(
      { lost: t.lost, phantom: t.phantom, duplicated: t.duplicated, unopenable: t.unopenable },
      { lost: 0, phantom: 0, duplicated: 0, unopenable: 0 },
      t.failures.join('\n'),
    );
  });

  it('a checkpoint cannot be renamed into place: the old one stands with the journal, nothing lost', async () => {
    const r = await underFault({ call: 'rename', path: /state\.json$/, code: 'EIO', times: 2 });
    assert.deepEqual(r.errors, []);
    assert.ok(
      r.logs.some((l) => /checkpoint failed: EIO/.test(l)),
      `the failure was logged: ${r.logs.join(' | ')}`,
    );
    const t = await check(r.acked, r.cuts);
    console.log(`# checkpoint rename EIO ×2: ${t.states} crash states: lost ${t.lost}, unopenable ${t.unopenable}`);
    assert.deepEqual(
      { lost: t.lost, phantom: t.phantom, duplicated: t.duplicated, unopenable: t.unopenable },
      { lost: 0, phantom: 0, duplicated: 0, unopenable: 0 },
      t.failures.join('\n'),
    );
  });

  it('the journal cannot be written (disk full) for a while: those sends are refused with the reason, and after it nothing refused turns up', async () => {
    const r = await underFault({ call: 'write', path: /journal\.ndjson$/, code: 'ENOSPC', times: 4 });
    assert.ok(r.errors.length >= 4, `refused while full (${r.errors.length})`);
    for (const e of r.errors) assert.match(e.message, /ENOSPC.*Free disk space/s);
    const t = await check(r.acked, r.cuts);
    console.log(
      `# journal ENOSPC ×4: ${r.errors.length} refused; ${t.states} crash states: lost ${t.lost}, refused yet there ${t.phantom}`,
    );
    assert.deepEqual(
      { lost: t.lost, phantom: t.phantom, duplicated: t.duplicated, unopenable: t.unopenable },
      { lost: 0, phantom: 0, duplicated: 0, unopenable: 0 },
      t.failures.join('\n'),
    );
  });
});

// The same faults met by the real hub process: an LD_PRELOAD library (helpers/faultShim.c) makes
// the kernel's answers fail, the hub runs unchanged, and the agents are real MCP clients.
describe('G4: the disk says no, to the real hub process', () => {
  const shim = faultShim();

  /** A hub with the shim loaded, alice and bob connected; `sends` tallies what was acknowledged or refused. */
  async function hubWithShim(t: { skip(m?: string): unknown; after(fn: () => unknown): void }) {
    if ('missing' in shim) {
      skipOrFail(t, shim.missing);
      return undefined;
    }
    const rule = faultRule(tempDir('fault-rule'), shim.lib);
    let hub = await startHub({ env: rule.env });
    t.after(() => hub.stop().catch(() => undefined));
    await (await connectAgent({ socket: hub.socket, name: 'bob' })).close(); // known, not live: its handoffs wait
    const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
    const acknowledged: string[] = [];
    const refused: { body: string; text: string }[] = [];
    const send = async (body: string) => {
      const r = await alice.call('send_handoff', { to: 'bob', body });
      if (r.isError) refused.push({ body, text: String((r.content[0] as { text: string }).text) });
      else acknowledged.push(body);
      return r;
    };
    /** After a kill -9 and a new hub (no shim rule armed): what bob's inbox holds. */
    const reopened = async () => {
      rule.disarm();
      await alice.close();
      await hub.kill9();
      const again = (hub = await hub.restart());
      const bob = await connectAgent({ socket: again.socket, name: 'bob' });
      const bodies = ((await bob.ok('inbox', { limit: 200 })).messages as { body: string }[]).map(plainBody);
      await bob.close();
      await again.stop();
      return {
        lost: acknowledged.filter((b) => !bodies.includes(b)).length,
        phantom: refused.filter((r) => bodies.includes(r.body)).length,
        duplicated: bodies.length - new Set(bodies).size,
      };
    };
    return { rule, hub: () => hub, alice, send, acknowledged, refused, reopened };
  }

  it('an fdatasync of the journal fails with EIO: that send is refused with the reason, the hub answers, the next send lands; after kill -9 nothing lost or refused there', async (t) => {
    const h = await hubWithShim(t);
    if (!h) return;
    await h.send('before the fault');
    h.rule.arm('fdatasync', 'journal.ndjson', 'EIO', 1);
    const r = await h.send('while the disk fails');
    assert.equal(h.rule.fired(), 1, `the shim failed one fdatasync: ${JSON.stringify(r)}\n${h.hub().log()}`);
    assert.equal(r.isError, true, 'refused');
    assert.equal(r.structuredContent.error.code, 'store_unavailable');
    assert.match(h.refused[0].text, /EIO.*Nothing was sent or recorded/s);
    assert.equal((await h.alice.ok('whoami')).identity, 'alice', 'still serving');
    await h.send('after the fault');
    const after = await h.reopened();
    console.log(
      `# real hub, fdatasync EIO: ${h.acknowledged.length} acknowledged, ${h.refused.length} refused; lost ${after.lost}, refused yet there ${after.phantom}, duplicated ${after.duplicated}`,
    );
    assert.deepEqual(after, { lost: 0, phantom: 0, duplicated: 0 });
    assert.deepEqual(h.acknowledged, ['before the fault', 'after the fault']);
  });

  it('the journal cannot be written (ENOSPC, three times): those sends are refused, later ones land; nothing lost or refused there after kill -9', async (t) => {
    const h = await hubWithShim(t);
    if (!h) return;
    await h.send('first');
    h.rule.arm('write', 'journal.ndjson', 'ENOSPC', 3);
    for (let i = 0; i < 6; i++) await h.send(`during ${i}`);
    assert.equal(h.rule.fired(), 3);
    assert.ok(
      h.refused.length >= 1 && h.refused.every((r) => /ENOSPC.*Free disk space/s.test(r.text)),
      `refused with the reason: ${h.refused.map((r) => r.text).join(' | ')}`,
    );
    const after = await h.reopened();
    console.log(
      `# real hub, journal ENOSPC ×3: ${h.acknowledged.length} acknowledged, ${h.refused.length} refused; lost ${after.lost}, refused yet there ${after.phantom}`,
    );
    assert.deepEqual(after, { lost: 0, phantom: 0, duplicated: 0 });
  });

  for (const [call, code] of [
    ['rename', 'EIO'],
    ['write', 'ENOSPC'],
  ] as const) {
    it(`the checkpoint a stopping hub writes fails (${call} ${code}): it says so, and the next hub has everything from the journal`, async (t) => {
      const h = await hubWithShim(t);
      if (!h) return;
      for (let i = 0; i < 5; i++) await h.send(`kept ${i}`);
      h.rule.arm(call, 'state.json', code, 100);
      await h.alice.close();
      await h.hub().stop(); // SIGTERM: the store checkpoints on close
      assert.ok(h.rule.fired() >= 1, 'the checkpoint met the fault');
      assert.match(h.hub().log(), new RegExp(`checkpoint on close failed: ${code}`), h.hub().log());
      h.rule.disarm();
      const again = await h.hub().restart();
      t.after(() => again.stop().catch(() => undefined));
      const bob = await connectAgent({ socket: again.socket, name: 'bob' });
      const bodies = ((await bob.ok('inbox', { limit: 50 })).messages as { body: string }[]).map(plainBody);
      await bob.close();
      await again.stop();
      assert.deepEqual(bodies.sort(), h.acknowledged.sort(), 'every acknowledged send, once');
    });
  }
});

// Chase, then escalate, on a fake clock: past its SLA an unACKed handoff is chased once; still
// silent one more SLA period later it escalates once to the sender's person (the editor identity
// of this hub), arriving in their inbox as an escalation that names the silent recipient.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyOf } from '../../extension/hub/bus/body';
import { Hub } from '../../extension/hub/hub';
import type { PushPayload, Session } from '../../extension/hub/presence/sessions';
import { PRESENCE_WINDOW_MS } from '../../extension/protocol/views';
import { fakeSession } from '../helpers/fakeSession';
import { tempDir } from '../helpers/hubProcess';

const session = (key: string, identity: string, got: PushPayload[], now: () => number): Session =>
  fakeSession(identity, key, { connectedAt: now(), lastSeen: now(), deliver: (p) => (got.push(p), true) });

async function fakeHub(name: string) {
  const clock = { t: 1_800_000_000_000 };
  const hub = new Hub({
    workspace: tempDir(`${name}-ws`),
    storeDir: tempDir(`${name}-store`),
    node: 'n',
    clock: () => clock.t,
    tickMs: 0,
  });
  await hub.start();
  return { hub, clock };
}

describe('escalation, on a fake clock', () => {
  it('chases once, then escalates once to the person, naming the silent recipient; the ledger says to whom and when', async () => {
    const { hub, clock } = await fakeHub('escalate');
    const now = () => clock.t;
    try {
      await hub.roster.reportWindow('window-1', { identity: 'maria', focused: true });
      await hub.remember('builder');
      const got: PushPayload[] = [];
      await hub.attach(session('bob-1', 'bob', got, now));
      const builder = { identity: 'builder', session: 'b-1', node: 'n' };
      const late = await hub.send(builder, {
        to: ['bob'],
        body: 'approve the migration <b>now</b>',
        slaMs: 60_000,
        ttlMs: 3_600_000,
      });
      const escalations = () => Object.values(hub.state.hot).filter((h) => h.message.escalation);

      const steps: { at: string; chases: number; escalations: number }[] = [];
      const record = (at: string) =>
        steps.push({
          at,
          chases: got.filter((p) => p.id === late.message_id && p.kind === 'chase').length,
          escalations: escalations().length,
        });
      clock.t += 61_000;
      await hub.tick();
      await hub.tick();
      record('past the SLA');
      clock.t += 59_000;
      await hub.tick();
      record('within the second period');
      clock.t += 2_000;
      await hub.tick();
      await hub.tick();
      record('past the second period');
      clock.t += 600_000;
      await hub.tick();
      record('much later');
      assert.deepEqual(steps, [
        { at: 'past the SLA', chases: 1, escalations: 0 },
        { at: 'within the second period', chases: 1, escalations: 0 },
        { at: 'past the second period', chases: 1, escalations: 1 },
        { at: 'much later', chases: 1, escalations: 1 },
      ]);

      const [esc] = escalations();
      assert.deepEqual(esc.message.recipients, ['maria'], 'to the person at this hub');
      assert.deepEqual(esc.message.escalation, { of: late.message_id, silent: 'bob' });
      assert.equal(esc.message.replyTo, late.message_id);
      assert.equal(esc.message.thread, late.thread, 'in the same thread');
      assert.equal(esc.message.from, 'builder', 'on behalf of the sender, so a reply goes back to it');
      assert.match(bodyOf(esc.message), /^Escalation: bob has not acknowledged a handoff from builder\./);
      assert.match(bodyOf(esc.message), /approve the migration <b>now<\/b>/);

      const entry = hub.pending('builder').find((e) => e.id === late.message_id)!;
      assert.deepEqual(
        entry.recipients[0].escalated,
        { to: 'maria', at: clock.t - 600_000, messageId: esc.message.id },
        'escalated, when, to whom',
      );

      const [maria] = hub.snapshot().people;
      assert.equal(maria.identity, 'maria');
      assert.equal(maria.unread, 1);
      assert.deepEqual(
        maria.inbox.map((i) => [i.id, i.escalation?.silent]),
        [[esc.message.id, 'bob']],
        'in her inbox as an escalation naming bob',
      );
      assert.equal(got.filter((p) => p.id === esc.message.id).length, 0, 'bob is not pushed the escalation about him');
    } finally {
      await hub.close();
    }
  });

  it('the silent recipient answering after all closes its escalation; a read does not', async () => {
    const { hub, clock } = await fakeHub('escalate-answered');
    try {
      await hub.roster.reportWindow('window-1', { identity: 'maria', focused: true });
      await hub.remember('builder');
      await hub.remember('bob');
      const builder = { identity: 'builder', session: 'b-1', node: 'n' };
      const bob = { identity: 'bob', session: 'bob-1', node: 'n' };
      const ackLater = await hub.send(builder, { to: ['bob'], body: 'acked late', slaMs: 60_000 });
      const doneLater = await hub.send(builder, { to: ['bob'], body: 'done late', slaMs: 60_000 });
      clock.t += 61_000;
      await hub.tick();
      clock.t += 61_000;
      await hub.tick();
      const escalationOf = (id: string) => Object.values(hub.state.hot).find((h) => h.message.escalation?.of === id)!;
      const mariaUnread = () => hub.snapshot().people.find((p) => p.identity === 'maria')!.unread;
      assert.equal(mariaUnread(), 2, 'both escalated to maria');

      await hub.receipt(bob, ackLater.message_id, 'read');
      assert.equal(escalationOf(ackLater.message_id).resolution, undefined, 'a read is not an answer');
      await hub.receipt(bob, ackLater.message_id, 'ack');
      assert.deepEqual(escalationOf(ackLater.message_id).resolution, {
        by: 'bob',
        at: clock.t,
        note: 'bob acknowledged after it was escalated: nothing left to chase.',
      });
      await hub.receipt(bob, doneLater.message_id, 'result', 'done', 'merged');
      assert.match(
        escalationOf(doneLater.message_id).resolution?.note ?? '',
        /^bob reported it done after it was escalated/,
      );
      assert.equal(mariaUnread(), 0, 'out of her inbox');
      assert.deepEqual(hub.inbox('maria'), []);
    } finally {
      await hub.close();
    }
  });

  it("escalates to the handoff's escalate_to over the hub's person; an ACK before the second period stops it; nobody to tell, nothing", async () => {
    const { hub, clock } = await fakeHub('escalate-to');
    try {
      await hub.remember('builder');
      await hub.remember('bob');
      await hub.remember('lead');
      const builder = { identity: 'builder', session: 'b-1', node: 'n' };
      const nobody = await hub.send(builder, { to: ['bob'], body: 'no person on this hub yet', slaMs: 60_000 });
      clock.t += 61_000;
      await hub.tick();
      clock.t += 61_000;
      await hub.tick();
      assert.equal(
        hub.state.hot[nobody.message_id].deliveries.bob.escalated,
        undefined,
        'no window, no escalate_to: nobody to escalate to',
      );

      await hub.roster.reportWindow('window-1', { identity: 'maria', focused: true });
      // A TTL short enough that the escalation to lead goes past its own SLA and chase in this test.
      const named = await hub.send(builder, {
        to: ['bob'],
        body: 'needs the lead',
        slaMs: 60_000,
        ttlMs: 150_000,
        escalateTo: 'lead',
      });
      const acked = await hub.send(builder, { to: ['bob'], body: 'answered in time', slaMs: 60_000 });
      clock.t += 61_000;
      await hub.tick();
      await hub.receipt({ identity: 'bob', session: 'bob-1', node: 'n' }, acked.message_id, 'ack');
      clock.t += 61_000;
      await hub.tick();
      assert.equal(hub.state.hot[named.message_id].deliveries.bob.escalated?.to, 'lead', 'the per-handoff target wins');
      assert.equal(
        hub.state.hot[acked.message_id].deliveries.bob.escalated,
        undefined,
        'ACKed after the chase: not escalated',
      );
      assert.equal(
        hub.state.hot[nobody.message_id].deliveries.bob.escalated?.to,
        'maria',
        'once a person is here, the old one escalates to them',
      );
      const toPerson = await hub.send(builder, {
        to: ['maria'],
        body: 'the person herself stays silent',
        slaMs: 60_000,
      });
      for (let i = 0; i < 5; i++) {
        clock.t += 61_000;
        await hub.tick();
      }
      assert.equal(
        hub.state.hot[toPerson.message_id].deliveries.maria.escalated,
        undefined,
        'the person is never escalated to about herself',
      );
      const toLead = Object.values(hub.state.hot).find((h) => h.message.escalation?.of === named.message_id)!;
      assert.ok(toLead.deliveries.lead.chasedAt, 'the escalation to lead was chased in its turn');
      assert.equal(toLead.message.slaMs, 150_000 - 122_000, 'due when the silent handoff would be dead-lettered');
      const count = Object.values(hub.state.hot).filter((h) => h.message.escalation).length;
      assert.equal(
        count,
        2,
        'two escalations, no more: an escalation the person leaves unanswered does not escalate again',
      );
      await assert.rejects(
        hub.send(builder, { to: ['bob'], body: 'x', escalateTo: 'not a name' }),
        /escalate_to "not a name" is not an identity name/,
      );
    } finally {
      await hub.close();
    }
  });

  it('a person is live while a window with that identity was focused in the last five minutes, and gone with its window', async () => {
    const { hub, clock } = await fakeHub('presence');
    try {
      const maria = () => hub.coverage().find((c) => c.identity === 'maria');
      await hub.roster.reportWindow('w1', { identity: 'maria', focused: true });
      assert.deepEqual(maria()?.person, { live: true, windows: 1, lastFocusedAt: clock.t });
      await hub.roster.reportWindow('w1', { identity: 'maria', focused: false });
      const leftAt = clock.t;
      clock.t += PRESENCE_WINDOW_MS;
      assert.equal(maria()?.person?.live, true, 'focused within five minutes');
      clock.t += 1;
      assert.deepEqual(
        maria()?.person,
        { live: false, windows: 1, lastFocusedAt: leftAt },
        'away: the window is open, unfocused too long',
      );
      await hub.roster.reportWindow('w2', { identity: 'maria', focused: true });
      assert.deepEqual(
        maria()?.person,
        { live: true, windows: 2, lastFocusedAt: clock.t },
        'a second window focused now',
      );
      hub.roster.dropWindow('w2');
      hub.roster.dropWindow('w1');
      assert.equal(maria()?.person, undefined, 'no window, no person at the editor');
      assert.deepEqual(hub.snapshot().people, []);
    } finally {
      await hub.close();
    }
  });

  it('one window notifies of a new handoff: the focused one that gained focus last, else the one focused last', async () => {
    const { hub, clock } = await fakeHub('notifier');
    try {
      const notifier = () => hub.snapshot().people.find((p) => p.identity === 'maria')?.notifier;
      await hub.roster.reportWindow('w1', { identity: 'maria', focused: true });
      assert.equal(notifier(), 'w1');
      clock.t += 1000;
      await hub.roster.reportWindow('w2', { identity: 'maria', focused: false });
      assert.equal(notifier(), 'w1', 'the focused window, not the newest');
      await hub.roster.reportWindow('w2', { identity: 'maria', focused: true });
      assert.equal(notifier(), 'w2', 'two say they are focused: the one that gained focus last');
      clock.t += 1000;
      await hub.roster.reportWindow('w1', { identity: 'maria', focused: true });
      assert.equal(notifier(), 'w2', 'reporting focus again is not gaining it');
      await hub.roster.reportWindow('w2', { identity: 'maria', focused: false });
      assert.equal(notifier(), 'w1');
      clock.t += 1000;
      await hub.roster.reportWindow('w1', { identity: 'maria', focused: false });
      assert.equal(notifier(), 'w1', 'nobody focused: the one focused last');
      hub.roster.dropWindow('w1');
      assert.equal(notifier(), 'w2');
    } finally {
      await hub.close();
    }
  });
});

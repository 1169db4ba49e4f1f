// The hub's in-memory indexes answer exactly what a scan of the whole state would: for random
// runs of sends, pushes, surfacings, receipts, failures, resolutions, archiving and clock steps, the
// MailIndex's inbox, unacked footer, unread count and hook answers, the LedgerIndex's summary and
// the DueIndex's timer events equal the plain functions over every open message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DueIndex } from '../../extension/hub/bus/dueIndex';
import { unsurfacedFor } from '../../extension/hub/bus/surfacing';
import { coverage, dueEvents, isAwaitingAck, isPending, overdue } from '../../extension/hub/bus/ledger';
import { awaitingAck, isUnread } from '../../extension/hub/bus/deliveryState';
import { LedgerIndex } from '../../extension/hub/bus/ledgerIndex';
import { MailIndex } from '../../extension/hub/bus/mailIndex';
import { emptyState, messageIdOf, type BusEvent, type BusState, type Message } from '../../extension/hub/bus/model';
import { apply, isSettled, isTerminal } from '../../extension/hub/bus/reduce';

const T0 = 1_700_000_000_000;
const NAMES = ['ann', 'bob', 'cat'];
const SESSIONS = ['s1', 's2'];

type Step =
  | { kind: 'send'; to: number[]; requiresAck: boolean; slaMs: number; ttlExtraMs: number }
  | { kind: 'receipt'; msg: number; to: number; receipt: 'read' | 'ack' | 'done' | 'stuck' | 'rejected' }
  | { kind: 'resolve'; msg: number }
  | { kind: 'push' | 'surface'; msg: number; to: number; session: number }
  | { kind: 'tick'; ms: number; lost: boolean }
  | { kind: 'archive' }
  | { kind: 'reopen' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('send' as const),
    to: fc.uniqueArray(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 3 }),
    requiresAck: fc.boolean(),
    slaMs: fc.integer({ min: 1, max: 50 }),
    ttlExtraMs: fc.integer({ min: 0, max: 50 }),
  }),
  fc.record({
    kind: fc.constant('receipt' as const),
    msg: fc.nat(),
    to: fc.integer({ min: 0, max: 2 }),
    receipt: fc.constantFrom('read' as const, 'ack' as const, 'done' as const, 'stuck' as const, 'rejected' as const),
  }),
  fc.record({ kind: fc.constant('resolve' as const), msg: fc.nat() }),
  fc.record({
    kind: fc.constantFrom('push' as const, 'surface' as const),
    msg: fc.nat(),
    to: fc.integer({ min: 0, max: 2 }),
    session: fc.integer({ min: 0, max: 1 }),
  }),
  fc.constant({ kind: 'archive' as const }),
  fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 40 }), lost: fc.boolean() }),
  fc.constant({ kind: 'reopen' as const }),
);

/** What a scan of the whole state says an identity's inbox and unacked mail are, oldest first. */
function scan(state: BusState, identity: string) {
  const mine = Object.values(state.hot)
    .filter((h) => h.deliveries[identity] && !h.resolution)
    .sort((a, b) => a.message.seq - b.message.seq);
  return {
    inbox: mine.filter((h) => !isTerminal(h.deliveries[identity].state)).map((h) => h.message.id),
    unacked: mine.filter((h) => h.message.requiresAck && awaitingAck(h.deliveries[identity])).map((h) => h.message.id),
    unread: mine.filter((h) => isUnread(h.deliveries[identity])).length,
  };
}

const sortEvents = (es: BusEvent[]) => es.map((e) => JSON.stringify(e)).sort();

describe('indexes agree with a scan of the state', () => {
  it('inbox, unacked footer, unread count, hook answers, the summary and timer events, over random runs', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 20, maxLength: 80 }), (steps) => {
        const state = emptyState('n1');
        let mail = new MailIndex();
        let due = new DueIndex();
        let ledger = new LedgerIndex();
        let now = T0;
        const sent: Message[] = [];
        const commit = (events: BusEvent[]) => {
          for (const e of events) apply(state, e);
          mail.note(state, events);
          due.note(state, events);
          ledger.note(
            state,
            events.map(messageIdOf).filter((id): id is string => id !== undefined),
          );
        };
        for (const s of steps) {
          if (s.kind === 'send') {
            const id = `01JD3V7W2K8Q5X9Y4Z6A1B${String(sent.length).padStart(4, '0')}`;
            const recipients = s.to.map((i) => NAMES[i]);
            const m: Message = {
              id,
              seq: ++state.seq,
              from: 'zed',
              address: recipients,
              recipients,
              thread: id,
              body: 'b',
              attachments: [],
              requiresAck: s.requiresAck,
              slaMs: s.slaMs,
              ttlMs: s.slaMs + s.ttlExtraMs,
              sentAt: now,
              sentBySession: 'z',
              node: 'n1',
            };
            sent.push(m);
            commit([{ type: 'sent', message: m }]);
          } else if (s.kind === 'receipt' && sent.length > 0) {
            const m = sent[s.msg % sent.length];
            const to = NAMES[s.to];
            if (!state.hot[m.id]?.deliveries[to]) continue;
            const outcome = s.receipt === 'read' || s.receipt === 'ack' ? undefined : s.receipt;
            commit([
              {
                type: 'receipt',
                id: m.id,
                recipient: to,
                receipt: {
                  kind: outcome ? 'result' : (s.receipt as 'read' | 'ack'),
                  outcome,
                  by: to,
                  session: 's',
                  node: 'n1',
                  at: now,
                },
              },
            ]);
          } else if (s.kind === 'resolve' && sent.length > 0) {
            commit([{ type: 'resolved', id: sent[s.msg % sent.length].id, resolution: { by: 'human', at: now } }]);
          } else if ((s.kind === 'push' || s.kind === 'surface') && sent.length > 0) {
            const m = sent[s.msg % sent.length];
            const to = NAMES[s.to];
            const session = SESSIONS[s.session];
            if (!state.hot[m.id]?.deliveries[to]) continue;
            commit([
              s.kind === 'push'
                ? { type: 'pushed', id: m.id, recipient: to, push: { session, node: 'n1', at: now, kind: 'live' } }
                : {
                    type: 'surfaced',
                    id: m.id,
                    recipient: to,
                    surfacing: { session, node: 'n1', at: now, path: 'hook', via: 'test', replayed: false },
                  },
            ]);
          } else if (s.kind === 'archive') {
            // A checkpoint moves settled messages out of the hot set with no event.
            const settled = Object.values(state.hot)
              .filter((h) => isSettled(h, now))
              .map((h) => h.message);
            for (const m of settled) delete state.hot[m.id];
            mail.forget(settled);
            ledger.forget(settled);
          } else if (s.kind === 'tick') {
            now += s.ms;
            const want = dueEvents(state, now);
            const got = due.take(state, now).events;
            assert.deepEqual(sortEvents(got), sortEvents(want), `timer events at +${now - T0} ms`);
            if (!s.lost) commit(got); // a write that failed: the next tick must produce them again
          } else if (s.kind === 'reopen') {
            // A restart rebuilds both indexes from the state.
            mail = MailIndex.of(state);
            due = DueIndex.of(state);
            ledger = LedgerIndex.of(state);
          }
          const open = Object.values(state.hot);
          assert.deepEqual(
            ledger.counts(),
            {
              open: open.length,
              pending: open.filter(isPending).length,
              awaitingAck: open.filter(isAwaitingAck).length,
            },
            'summary counts',
          );
          assert.deepEqual(ledger.overdue(state, now, 2), overdue(state, now, 2), `overdue at +${now - T0} ms`);
          assert.deepEqual(
            coverage(
              state,
              () => 0,
              now,
              undefined,
              (n) => ledger.unacked(n),
            ),
            coverage(state, () => 0, now),
            'coverage',
          );
          assert.deepEqual(
            ledger.pendingFrom('zed').sort(),
            open
              .filter(isPending)
              .map((h) => h.message.id)
              .sort(),
            "the sender's pending ledger",
          );
          for (const name of NAMES) {
            const want = scan(state, name);
            assert.deepEqual(
              mail.openFor(state, name).map((h) => h.message.id),
              want.inbox,
              `${name}'s inbox`,
            );
            const summary = mail.unackedSummary(state, name, 2);
            assert.equal(summary.count, want.unacked.length, `${name}'s unacked count`);
            assert.deepEqual(
              summary.oldest.map((h) => h.message.id),
              want.unacked.slice(0, 2),
              `${name}'s oldest unacked`,
            );
            assert.equal(mail.unreadCount(name), want.unread, `${name}'s unread count`);
            for (const session of SESSIONS) {
              const hook = unsurfacedFor(mail.openFor(state, name), name, session, () => false);
              const got = mail.unsurfaced(state, name, session, new Set(), 2);
              assert.deepEqual(
                { ids: got.items.map((h) => h.message.id), count: got.count },
                { ids: hook.slice(0, 2).map((h) => h.message.id), count: hook.length },
                `${name}'s hook answer in ${session}`,
              );
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

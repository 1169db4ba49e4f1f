// A send, start to answer: once per idempotency key, decided by the bus, committed, pushed to
// every live session of each recipient, then answered with what happened to each (G1): pushed or
// queued, when the recipient's model will see it, and where a remote copy is.
import type { Backfill } from '../state/backfill';
import { decideSend, onceKey, type Caller, type Limits, type SendDraft } from '../bus/decide';
import { BusError } from '../bus/errors';
import { newRecipientOutcome, sendResult, sessionsReached } from '../bus/ledger';
import { isRemote } from '../bus/relay';
import type { Attention } from '../deliver/attention';
import type { Journal } from '../state/journal';
import type { Pushes } from '../deliver/pushes';
import { lookup } from './reading';
import type { RemoteLink } from '../remote';
import type { LocalLinks } from '../link/localLinks';
import { mixedDestinations, qualifierOf } from '../bus/links';
import { asDuplicate, SendMemory } from '../state/sendMemory';
import type { SessionRegistry } from '../presence/sessions';
import type { RecipientOutcome, RelayOutcome, SendResult } from '../../protocol/views';

export interface SendingDeps {
  journal: Journal;
  sessions: SessionRegistry;
  pushes: Pushes;
  attention: Attention;
  limits: Limits;
  now: () => number;
  /** The link to other nodes, if one is attached. */
  link: () => RemoteLink | undefined;
  /** The repositories on this machine linked to this one. */
  links: LocalLinks;
  /** How long a send to remote recipients waits for the homeserver (or the linked hub) before answering. */
  relayWaitMs: number;
  /** A person at an editor window (no model: their handoffs wait in the editor's inbox). */
  isPerson: (identity: string) => boolean;
}

export class Sending {
  private readonly memory: SendMemory;

  constructor(private readonly deps: SendingDeps) {
    this.memory = new SendMemory(deps.limits.duplicateWindowMs);
  }

  /** After the store opened: the open messages still inside the duplicate window, filled in behind. */
  seed(skipped: (id: string, e: Error) => void): Backfill {
    const { journal } = this.deps;
    return this.memory.seed(
      journal.openIds(),
      () => journal.state,
      () => this.deps.now(),
      skipped,
    );
  }

  send(caller: Caller, req: SendDraft): Promise<SendResult> {
    return this.memory.once(caller.identity, onceKey(req), () => this.sendOnce(caller, req));
  }

  private async sendOnce(caller: Caller, req: SendDraft): Promise<SendResult> {
    const { journal } = this.deps;
    journal.writable();
    const now = this.deps.now();
    const decision = decideSend(journal.state, req, {
      caller,
      now,
      newId: () => journal.newId(now),
      nextSeq: () => journal.nextSeq(),
      liveIdentities: () => this.deps.sessions.identities(),
      recent: this.memory.recent,
      limits: this.deps.limits,
      linked: this.deps.links.agreedNames(),
    });
    if (decision.kind === 'duplicate') {
      // A twin racing the first send waits for it to land; if the store refused the first, this is the send.
      if (!(await this.memory.landed(decision.id))) return this.sendOnce(caller, req);
      return asDuplicate(await this.describe(decision.id), decision.why);
    }
    const m = decision.message;
    const mixed = mixedDestinations(m.recipients, this.deps.links.names());
    if (mixed)
      throw new BusError(
        'invalid_input',
        `The recipients are in ${mixed.length} places (${mixed.join(', ')}): a handoff goes to one linked repository (or to this one and one other). Nothing was sent; send one handoff per repository.`,
      );
    const forget = this.memory.track(m, decision.fingerprint); // before the await: a racing twin sees it
    let durable = false;
    let seen: RecipientOutcome['seen_when'][] = [];
    let reached: Map<string, number> | undefined;
    try {
      reached = (
        await this.deps.pushes.admit([{ type: 'sent', message: m }], {
          committing: (p) => this.memory.committing(m.id, p),
          beforeArrive: () => {
            durable = true;
            this.memory.settled(m.id);
            this.memory.prune(now);
            this.deps.pushes.prune();
            // When each will see it, as things stand before the arrival wakes an idle waiter.
            seen = m.recipients.map((identity) => this.seenWhen(identity));
          },
        })
      ).get(m.id);
    } catch (e) {
      if (!durable) {
        // the store refused it: nothing was sent
        this.memory.settled(m.id);
        forget();
      }
      throw e;
    }
    const recipients = m.recipients.map((identity, i) => {
      const outcome = newRecipientOutcome(identity, reached?.get(identity) ?? 0, seen[i]);
      const why = seen[i] === 'when_it_calls_inbox' ? this.unreachedWhy(identity) : undefined;
      return why ? { ...outcome, why } : outcome;
    });
    return sendResult(
      m,
      recipients,
      m.recipients.some(isRemote) ? await this.relayOutcome(m.id, this.deps.relayWaitMs) : undefined,
    );
  }

  /** What keeps the recipient's live sessions from running Handoff's hooks: their CLI's version, where it runs. */
  private unreachedWhy(identity: string): string | undefined {
    const limits = new Set(this.deps.sessions.forIdentity(identity).flatMap((s) => s.limits ?? []));
    return limits.size ? [...limits].join(' ') : undefined;
  }

  private seenWhen(identity: string): RecipientOutcome['seen_when'] {
    if (isRemote(identity)) return 'on_another_node';
    const hooked = this.deps.attention.seenWhen(identity);
    return hooked === 'when_it_calls_inbox' && this.deps.isPerson(identity) ? 'in_their_editor' : hooked;
  }

  private async relayOutcome(id: string, waitMs: number): Promise<RelayOutcome> {
    const hot = this.deps.journal.state.hot[id];
    const remote = hot?.message.recipients.find(isRemote);
    const place = remote ? qualifierOf(remote) : undefined;
    if (place && this.deps.links.names().has(place)) return this.deps.links.whereIs(id, place, waitMs);
    const relayed = hot?.relayed;
    if (relayed) return { state: 'on_homeserver', event_id: relayed.eventId, at: relayed.at };
    const link = this.deps.link();
    if (!link) {
      return {
        state: 'in_outbox',
        note: 'Matrix is not connected on this hub: the handoff waits in the outbox (persisted with its txnId) and is sent when Matrix connects.',
      };
    }
    return link.whereIs(id, waitMs);
  }

  /** The first send's answer as it stands now, for a duplicate. */
  private async describe(id: string): Promise<SendResult> {
    const view = await lookup(this.deps.journal, id);
    if (!view) throw new BusError('unknown_message', `Message ${id} is no longer on this hub.`);
    const recipients = view.deliveries.map((d) => ({
      identity: d.recipient,
      state: d.state,
      sessions: sessionsReached(d),
      seen_when: this.seenWhen(d.recipient),
    }));
    return sendResult(
      view.message,
      recipients,
      recipients.some((r) => isRemote(r.identity)) ? await this.relayOutcome(id, 0) : undefined,
    );
  }
}

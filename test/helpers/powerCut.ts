// What the power-cut tests share: a hub on a CrashFs, what it acknowledged at each cut, and the
// check of every distinct crash image a cut can leave.
import { bodyOf } from '../../extension/hub/bus/body';
import { messageTxnId } from '../../extension/hub/bus/relay';
import type { Message } from '../../extension/hub/bus/model';
import { Hub } from '../../extension/hub/hub';
import { History } from '../../extension/hub/store/history';
import type { PushPayload, Session } from '../../extension/hub/presence/sessions';
import { CrashFs, CUTS, imageKey, imageOf, type DiskImage, type DiskState } from './crashFs';
import { fakeSession } from './fakeSession';

export const STORE = '/home/u/.local/state/handoff/store';
export const START = Date.parse('2026-12-01T09:00:00Z');

export function session(identity: string, key: string, deliver: (p: PushPayload) => void): Session {
  return fakeSession(identity, key, { deliver: (p) => (deliver(p), true) });
}

/** What the hub had acknowledged: each list only grows, so a cut notes their lengths. */
export interface Acked {
  sends: { id: string; body: string }[];
  receipts: { id: string; kind: 'read' | 'ack' | 'result' }[];
  escalations: string[];
  /** Bodies of every send attempted, acknowledged or not. */
  attempted: Set<string>;
  /** Bodies of sends the hub refused (it said nothing was sent): from then on, never to appear. */
  refused: string[];
  /** Sends to a recipient on another node: in the outbox, or relayed, from then on. */
  remote: string[];
  /** Messages the homeserver took (outbox progress committed): relayed from then on. */
  relayed: string[];
}

export interface Cut {
  state: DiskState;
  sends: number;
  receipts: number;
  escalations: number;
  refused: number;
  remote: number;
  relayed: number;
}

export function hubOn(
  fs: CrashFs,
  clock: { t: number },
  minCheckpointBytes = 12 * 1024,
  log?: (line: string) => void,
  storeDir = STORE,
): Hub {
  return new Hub({
    workspace: '/home/u/project',
    storeDir,
    node: 'n',
    tickMs: 0,
    clock: () => clock.t,
    log,
    // Segments of a few handoffs: the scenario seals several, each with its index.
    store: { fs, minCheckpointBytes, segmentBytes: SEGMENT_BYTES },
  });
}

export const SEGMENT_BYTES = 6 * 1024;

/** Every message the image holds once opened: the hot set, and the history's lines not also hot. */
export function messagesIn(hub: Hub, image: DiskImage, store = STORE): Message[] {
  const hot = Object.values(hub.state.hot).map((h) => ({ ...h.message, body: bodyOf(h.message) }));
  const ids = new Set(hot.map((m) => m.id));
  const history = [...image.files]
    .filter(([path]) => path.startsWith(`${store}/history/`) && path.endsWith('.ndjson'))
    .map(([, bytes]) => bytes.toString('utf8'))
    .join('\n');
  const archived = new Map<string, Message>();
  for (const line of history.split('\n')) {
    if (!line.trim() || line.startsWith('\0')) continue;
    try {
      const m = (JSON.parse(line) as { message: Message }).message;
      if (!ids.has(m.id)) archived.set(m.id, m);
    } catch {
      // a torn last line: the store cuts it off
    }
  }
  return [...hot, ...archived.values()];
}

export interface Tally {
  states: number;
  cuts: number;
  lost: number;
  duplicated: number;
  phantom: number;
  unopenable: number;
  /** States whose history catalog was there but unusable (rebuilt from the indexes: slow once, nothing lost). */
  catalogRebuilt: number;
  /** The most indexes a state's catalog did not list yet (read at its start). */
  catalogBehind: number;
  failures: string[];
}

/** What a start of the history alone (on its own copy of the image) makes of the catalog. */
async function catalogOf(image: DiskImage): Promise<{ rebuilt: boolean; behind: number }> {
  let seen = { rebuilt: false, behind: 0 };
  try {
    const h = await History.open(STORE, {
      fs: CrashFs.from(image),
      segmentBytes: SEGMENT_BYTES,
      // missing before the first seal's write is only behind by that one
      onCatalog: (o) => (seen = { rebuilt: !!o.rebuilt && o.rebuilt !== 'missing', behind: o.added }),
    });
    await h.close();
  } catch {
    // damage: counted as unopenable by the hub's own start
  }
  return seen;
}

/** Notes, before each change to the disk, the state a cut would leave and what was acknowledged by then. */
export function recorder(acked: Acked): { cuts: Cut[]; onMutation: (state: DiskState) => void } {
  const cuts: Cut[] = [];
  return {
    cuts,
    onMutation: (state) =>
      cuts.push({
        state,
        sends: acked.sends.length,
        receipts: acked.receipts.length,
        escalations: acked.escalations.length,
        refused: acked.refused.length,
        remote: acked.remote.length,
        relayed: acked.relayed.length,
      }),
  };
}

export const noneAcked = (): Acked => ({
  sends: [],
  receipts: [],
  escalations: [],
  attempted: new Set(),
  refused: [],
  remote: [],
  relayed: [],
});

/** Opens a hub on each distinct image the cuts can leave, and counts what is wrong. */
export async function check(acked: Acked, cuts: Cut[]): Promise<Tally> {
  const tally: Tally = {
    states: 0,
    cuts: cuts.length,
    lost: 0,
    duplicated: 0,
    phantom: 0,
    unopenable: 0,
    catalogRebuilt: 0,
    catalogBehind: 0,
    failures: [],
  };
  const seen = new Set<string>();
  const fail = (what: string) => {
    if (tally.failures.length < 5) tally.failures.push(what);
  };
  const count = (kind: 'lost' | 'duplicated' | 'phantom', what: string) => {
    tally[kind]++;
    fail(what);
  };
  for (const cut of cuts) {
    for (const [name, pick] of Object.entries(CUTS)) {
      const survival = pick(cut.state);
      if (!survival) continue;
      const image = imageOf(cut.state, survival);
      const key = `${imageKey(image)} ${cut.sends} ${cut.receipts} ${cut.escalations} ${cut.refused} ${cut.remote} ${cut.relayed}`;
      if (seen.has(key)) continue;
      seen.add(key);
      tally.states++;
      const where = `cut ${name} before "${cut.state.before}" (#${cut.state.at}; ${cut.sends} sends, ${cut.receipts} receipts acknowledged)`;
      const catalog = await catalogOf(image);
      if (catalog.rebuilt) tally.catalogRebuilt++;
      tally.catalogBehind = Math.max(tally.catalogBehind, catalog.behind);
      const hub = hubOn(CrashFs.from(image), { t: START + 3_600_000 });
      await hub.start();
      try {
        if (!hub.journal.isOpen) {
          tally.unopenable++;
          fail(`${where}: unopenable: ${hub.journal.status.error}`);
          continue;
        }
        const messages = messagesIn(hub, image);
        const byBody = new Map<string, number>();
        for (const m of messages) byBody.set(String(m.body), (byBody.get(String(m.body)) ?? 0) + 1);
        const present = new Set(messages.map((m) => m.id));
        const refused = new Set(acked.refused.slice(0, cut.refused));
        for (const s of acked.sends.slice(0, cut.sends)) {
          if (!present.has(s.id)) count('lost', `${where}: acknowledged send ${s.body.slice(0, 24)} lost`);
        }
        for (const r of acked.receipts.slice(0, cut.receipts)) {
          const view = await hub.lookup(r.id);
          const has = view?.deliveries.find((d) => d.recipient === 'bob')?.receipts.some((x) => x.kind === r.kind);
          if (!has) count('lost', `${where}: acknowledged ${r.kind} of ${r.id} lost`);
        }
        for (const id of acked.escalations.slice(0, cut.escalations))
          if (!present.has(id)) count('lost', `${where}: escalation ${id} lost`);
        const relayed = new Set(acked.relayed.slice(0, cut.relayed));
        for (const id of acked.remote.slice(0, cut.remote)) {
          const view = await hub.lookup(id);
          const queued = !!hub.state.relay?.outbox[messageTxnId(id)];
          if (relayed.has(id) ? !view?.relayed : !view?.relayed && !queued)
            count('lost', `${where}: ${id} neither relayed nor in the outbox (relay acknowledged: ${relayed.has(id)})`);
        }
        for (const [body, n] of byBody) if (n > 1) count('duplicated', `${where}: ${body.slice(0, 24)} ×${n}`);
        const perSilent = new Map<string, number>();
        for (const m of messages) {
          if (m.escalation) perSilent.set(m.escalation.of, (perSilent.get(m.escalation.of) ?? 0) + 1);
          else if (!acked.attempted.has(String(m.body))) count('phantom', `${where}: ${m.id} was never sent`);
          else if (refused.has(String(m.body)))
            count('phantom', `${where}: ${String(m.body).slice(0, 24)} was refused, yet is there`);
        }
        for (const [of, n] of perSilent) if (n > 1) count('duplicated', `${where}: ${of} escalated ×${n}`);
      } finally {
        await hub.close();
      }
    }
  }
  return tally;
}

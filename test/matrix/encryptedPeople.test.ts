// A person in an end-to-end encrypted bus room, on a real Synapse. carol uses matrix-js-sdk's
// full client with its Rust crypto (what Element runs), not the hub's crypto: she reads a handoff
// addressed to her only because hub A shared the room key with her device, and she finishes it
// with "done: …" from her own client, encrypted; alice's ledger shows that result once. Hub A
// lists carol's device as unverified: no node key can vouch for a person's device, so it gets the
// keys (a person must read) but is never silently trusted. encrypted.test.ts has hubs only; this
// is the other half of the room, people, through a client whose crypto the hub does not control.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import {
  ClientEvent,
  createClient,
  MatrixEventEvent,
  SyncState,
  type MatrixClient,
  type MatrixEvent,
} from 'matrix-js-sdk';
import { logger as sdkLogger } from 'matrix-js-sdk/lib/logger.js';
import { personIdentity } from '../../extension/hub/matrix/person';
import { connectAgent, plainBody, type Agent } from '../helpers/agent';
import type { HubProcess } from '../helpers/hubProcess';
import {
  api,
  matrixHub,
  matrixSuite,
  snapshot,
  stopAll,
  synapse,
  unique,
  user,
  waitFor,
  waitUntil,
  type MatrixUser,
  type Synapse,
} from './world';

/**
 * matrix-js-sdk arms a watchdog timer for each request (up to 110 s for a sync) and never clears
 * it, which would keep this process alive two minutes after the suite. Each guards a request whose
 * socket keeps the process alive anyway, so they are unref'd while carol's client runs.
 */
function unrefWatchdogs(): () => void {
  const real = globalThis.setTimeout;
  globalThis.setTimeout = ((fn: () => void, ms?: number, ...args: unknown[]) => {
    const timer = real(fn, ms, ...args);
    if ((ms ?? 0) >= 45_000) (timer as unknown as NodeJS.Timeout).unref();
    return timer;
  }) as typeof setTimeout;
  return () => void (globalThis.setTimeout = real);
}

/** carol's Matrix client, as a person runs it: its own sync and its own device with Rust crypto. */
async function personClient(hs: Synapse, u: MatrixUser): Promise<MatrixClient> {
  const { device_id: deviceId } = await api(hs, u.accessToken, 'GET', '/account/whoami');
  const client = createClient({ baseUrl: hs.url, userId: u.userId, accessToken: u.accessToken, deviceId });
  await client.initRustCrypto({ useIndexedDB: false });
  const prepared = new Promise<void>((resolve) =>
    client.on(ClientEvent.Sync, (s) => s === SyncState.Prepared && resolve()),
  );
  await client.startClient({ initialSyncLimit: 10 });
  await prepared;
  return client;
}

matrixSuite('Matrix: a person with an end-to-end encrypting client in an encrypted bus room', () => {
  let hs: Synapse;
  let a: MatrixUser;
  let carol: MatrixUser;
  let person: string;
  let hubA: HubProcess;
  let alice: Agent;
  let carolsClient: MatrixClient;
  let roomId: string;
  const agents: Agent[] = [];
  const hubs: HubProcess[] = [];
  /** Events carol's client decrypted, in the order it did. */
  const readByCarol: MatrixEvent[] = [];
  let restoreTimers: () => void = () => undefined;

  /** The room's timeline as the homeserver stores it, fetched raw with carol's token. */
  const onHomeserver = async (): Promise<any[]> =>
    (await api(hs, carol.accessToken, 'GET', `/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=200`)).chunk;
  /** Plain chat from carol; returns once hub A has read (and dropped) it, so it read all before it too. */
  const chat = async (body: string): Promise<void> => {
    const dropped = async () => (await snapshot(hubA)).link!.dropped?.meaningless ?? 0;
    const before = await dropped();
    await carolsClient.sendTextMessage(roomId, body);
    await waitUntil(
      async () => (await dropped()) > before,
      30_000,
      () => `hub A to read "${body}"\n${hubA.log()}`,
    );
  };

  before(async () => {
    restoreTimers = unrefWatchdogs();
    if (!process.env.E2EE_DEBUG) {
      const root = sdkLogger as unknown as { methodFactory: () => () => void; rebuild(): void };
      root.methodFactory = () => () => undefined;
      root.rebuild();
    }
    hs = await synapse();
    const tag = unique();
    a = await user(hs, `a-${tag}`);
    carol = await user(hs, `carol-${tag}`);
    person = personIdentity(carol.userId)!;
    const room = `#e2ee-people-${tag}:${hs.serverName}`;
    const people = [carol.userId];
    hubA = await matrixHub(hs, { node: 'nodeA', user: a, room, allowed: people, people, encrypt: true });
    hubs.push(hubA);
    roomId = (await snapshot(hubA)).link!.room!;
    alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
    agents.push(alice);
    carolsClient = await personClient(hs, carol);
    carolsClient.on(MatrixEventEvent.Decrypted, (ev) => {
      if (!ev.isDecryptionFailure()) readByCarol.push(ev);
    });
    await carolsClient.joinRoom(roomId); // she was invited as an allowed sender
    await waitUntil(
      () => carolsClient.getCrypto()!.isEncryptionEnabledInRoom(roomId),
      30_000,
      "carol's client to see the room is encrypted",
    );
    // Hub A shares the room key with the devices it knows of: it reads her first words (her device
    // has uploaded its keys by then) before a handoff to her is encrypted.
    await chat('morning all');
  });
  after(async () => {
    if (process.env.E2EE_DEBUG) console.log(hubA.log());
    carolsClient?.stopClient();
    await stopAll(agents, hubs, hs);
    restoreTimers();
  });

  it("carol's client decrypts a handoff to her; she finishes it with an encrypted reply, taken once", async () => {
    const secret = `the release key is ${unique()}`;
    const sent = await alice.ok('send_handoff', { to: person, body: secret });
    const eventId: string = sent.relay.event_id;
    assert.ok(eventId, `on the homeserver: ${JSON.stringify(sent.relay)}`);

    // 1. Her client reads it in the clear; the homeserver holds ciphertext only.
    await waitFor(
      () => readByCarol.some((e) => e.getId() === eventId),
      30_000,
      `carol's client to decrypt ${eventId}; it decrypted ${readByCarol.map((e) => e.getId()).join(', ') || 'nothing'}`,
    );
    const read = readByCarol.find((e) => e.getId() === eventId)!;
    assert.equal(read.getType(), 'm.room.message');
    assert.match(read.getContent().body, new RegExp(secret));
    assert.deepEqual(read.getContent()['m.mentions'], { user_ids: [carol.userId] }, 'carol is mentioned');
    const raw = await api(hs, carol.accessToken, 'GET', `/rooms/${encodeURIComponent(roomId)}/event/${eventId}`);
    assert.equal(raw.type, 'm.room.encrypted');
    assert.ok(!JSON.stringify(await onHomeserver()).includes(secret), 'the handoff is readable on the homeserver');

    // 2. She answers from her client: a reply, which her client encrypts.
    const reply = await carolsClient.sendMessage(roomId, {
      msgtype: 'm.text',
      body: 'done: shipped it',
      'm.relates_to': { 'm.in_reply_to': { event_id: eventId } },
    } as never);
    const rawReply = await api(
      hs,
      carol.accessToken,
      'GET',
      `/rooms/${encodeURIComponent(roomId)}/event/${reply.event_id}`,
    );
    assert.equal(rawReply.type, 'm.room.encrypted', 'her client encrypted her reply');
    let d: any;
    await waitUntil(
      async () => {
        d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
        return d.state === 'done';
      },
      30_000,
      () => `carol's result at alice: ${JSON.stringify(d)}\n${hubA.log()}`,
    );
    // Hub A reads past her reply once more before counting: a second result would be there by then.
    await chat('thanks');
    d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
    assert.deepEqual(
      d.receipts
        .filter((r: any) => r.kind === 'result')
        .map((r: any) => [r.by, r.outcome, r.summary && plainBody({ body: r.summary })]),
      [[person, 'done', 'shipped it']],
      'exactly one result receipt',
    );
    assert.equal(
      alice.pushes.filter((p) => p.meta.from === person).length,
      0,
      'a finishing reply is a receipt, not a new handoff',
    );

    // 3. Hub A's view of the room's devices: itself, and carol's device flagged, not trusted.
    const enc = (await snapshot(hubA)).link!.encryption!;
    const devicesOf = (u: string) => enc.devices.filter((x) => x.user === u).map((x) => [x.device, x.trust]);
    assert.deepEqual(devicesOf(carol.userId), [[carolsClient.getDeviceId(), 'unverified']], JSON.stringify(enc));
    assert.deepEqual(devicesOf(a.userId), [[enc.device, 'this hub']], JSON.stringify(enc));
  });

  it('her ✅ reaction ACKs a handoff: her client sends reactions in the clear, and they count', async () => {
    const sent = await alice.ok('send_handoff', { to: person, body: `one more ${unique()}` });
    const eventId: string = sent.relay.event_id;
    await waitFor(() => readByCarol.some((e) => e.getId() === eventId), 30_000, `carol's client to decrypt ${eventId}`);
    const reaction = await carolsClient.sendEvent(
      roomId,
      'm.reaction' as never,
      {
        'm.relates_to': { rel_type: 'm.annotation', event_id: eventId, key: '✅' },
      } as never,
    );
    const raw = await api(
      hs,
      carol.accessToken,
      'GET',
      `/rooms/${encodeURIComponent(roomId)}/event/${reaction.event_id}`,
    );
    assert.equal(raw.type, 'm.reaction', 'Matrix clients do not encrypt reactions');
    let d: any;
    await waitUntil(
      async () => {
        d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
        return d.receipts.some((r: any) => r.kind === 'ack');
      },
      30_000,
      () => `carol's ACK at alice: ${JSON.stringify(d)}\n${hubA.log()}`,
    );
    assert.deepEqual(
      d.receipts.map((r: any) => [r.kind, r.by]),
      [['ack', person]],
    );
  });
});

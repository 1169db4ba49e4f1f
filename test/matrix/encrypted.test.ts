// An end-to-end encrypted bus room on real Synapse homeservers — one, then two federating (two
// organisations): each hub has one device (matrix-js-sdk's Rust crypto) kept in its store folder,
// verified by its node's Ed25519 key. The homeservers hold only ciphertext; a hub killed -9 comes
// back as the same device and reads what was sent while it was down; a device of a hub's account
// that no node signed for gets no room keys and is not believed.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { connectAgent, type Agent } from '../helpers/agent';
import { tempDir, type HubProcess } from '../helpers/hubProcess';
import { startSynapse } from './synapse.mjs';
import { Homeserver } from '../../extension/hub/matrix/homeserver';
import { matrixConfig } from '../../extension/hub/matrix/config';
import { RoomCrypto } from '../../extension/hub/matrix/roomCrypto';
import {
  api,
  countPushes,
  login,
  matrixHub,
  matrixSuite,
  snapshot,
  stopAll,
  synapse,
  unique,
  user,
  waitFor,
  waitMatrix,
  waitPeer,
  waitUntil,
  type MatrixUser,
  type Synapse,
} from './world';

const federating = () => startSynapse({ dir: tempDir('synapse-fed'), federation: true }) as Promise<Synapse>;

encryptedRoom('Matrix: an end-to-end encrypted bus room', async () => {
  const hs = await synapse();
  return [hs, hs];
});
encryptedRoom('Matrix: an end-to-end encrypted bus room across two federating homeservers', () =>
  Promise.all([federating(), federating()]),
);

function encryptedRoom(name: string, servers: () => Promise<[Synapse, Synapse]>): void {
  matrixSuite(name, () => {
    let hs: Synapse;
    let hsB: Synapse;
    let a: MatrixUser;
    let b: MatrixUser;
    let hubA: HubProcess;
    let hubB: HubProcess;
    let alice: Agent;
    let bob: Agent;
    let roomId: string;
    const agents: Agent[] = [];
    const hubs: HubProcess[] = [];
    const secret = `the deploy key is ${unique()}`;

    /** The room's timeline as the homeserver stores it (read with hub A's account). */
    const roomEvents = async (): Promise<{ type: string; content: Record<string, unknown>; sender: string }[]> =>
      (await api(hs, a.accessToken, 'GET', `/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=200`)).chunk;

    before(async () => {
      [hs, hsB] = await servers();
      const tag = unique();
      a = await user(hs, `a-${tag}`);
      b = await user(hsB, `b-${tag}`);
      // The room lives on the first server; over federation, hub B joins it through its own.
      const room = `#e2ee-${tag}:${hs.serverName}`;
      hubA = await matrixHub(hs, { node: 'nodeA', user: a, room, allowed: [b.userId], encrypt: true });
      hubB = await matrixHub(hsB, { node: 'nodeB', user: b, room, allowed: [a.userId], encrypt: true });
      hubs.push(hubA, hubB);
      roomId = (await snapshot(hubA)).link!.room!;
      alice = await connectAgent({ socket: hubA.socket, name: 'alice', session: 'alice-1' });
      bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
      agents.push(alice, bob);
      await waitPeer(alice, 'bob@nodeB', 30_000);
      await waitPeer(bob, 'alice@nodeA', 30_000);
    });
    after(async () => {
      if (process.env.E2EE_DEBUG) for (const h of hubs) console.log(h.log());
      await stopAll(agents, hubs, hs);
      if (hsB !== hs) await hsB.stop();
    });

    it('a handoff and its ACK cross the room; the homeserver holds only ciphertext', async () => {
      const sent = await alice.ok('send_handoff', { to: 'bob@nodeB', body: secret });
      await waitFor(() => bob.pushes.some((p) => p.meta.message_id === sent.message_id), 30_000, 'the push at bob');
      const pushed = bob.pushes.find((p) => p.meta.message_id === sent.message_id)!;
      assert.match(pushed.content, new RegExp(secret));
      await bob.ok('ack', { message_id: sent.message_id });
      await bob.ok('report_result', { message_id: sent.message_id, outcome: 'done', summary: 'rotated it' });
      let d: any;
      await waitUntil(
        async () => {
          d = (await alice.ok('get_receipts', { message_id: sent.message_id })).deliveries[0];
          return d.state === 'done';
        },
        30_000,
        () => `bob's ACK and result at alice: ${JSON.stringify(d)}`,
      );
      assert.deepEqual(
        d.receipts.map((r: any) => r.kind),
        ['ack', 'result'],
      );
      assert.equal(d.pushes.length, 1, "bob's push, reported back through the room");
      const events = (await roomEvents()).filter((e) => e.type !== 'm.room.member' && !('state_key' in e));
      const clear = events.filter((e) => e.type !== 'm.room.encrypted');
      assert.deepEqual(
        clear.map((e) => e.type),
        [],
        'events in the clear in an encrypted room',
      );
      assert.ok(events.length >= 2, `the handoff and its receipts are in the room (${events.length} events)`);
      assert.ok(!JSON.stringify(await roomEvents()).includes(secret), 'the body is readable on the homeserver');
      const status = (await snapshot(hubA)).link!.encryption!;
      assert.equal(status.state, 'on');
      const bDevices = status.devices.filter((d) => d.user === b.userId);
      assert.deepEqual(
        bDevices.map((d) => d.trust),
        ['verified'],
        `hub B's device, verified by nodeB's key: ${JSON.stringify(status.devices)}`,
      );
      assert.equal(countPushes([bob], new Set([sent.message_id])).unflagged.get(sent.message_id), 1, 'pushed once');
    });

    it('a hub killed -9 comes back as the same device and reads what was sent while it was down', async () => {
      const before = (await snapshot(hubB)).link!.encryption!;
      await bob.close();
      await hubB.kill9();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push(
          (await alice.ok('send_handoff', { to: 'bob@nodeB', body: `while B is down ${i} ${unique()}` })).message_id,
        );
      hubB = await hubB.restart();
      hubs.push(hubB);
      await waitMatrix(hubB, 'connected', 30_000);
      const after = (await snapshot(hubB)).link!.encryption!;
      assert.equal(after.device, before.device, 'the same device id');
      assert.equal(after.deviceKey, before.deviceKey, 'the same device key');
      bob = await connectAgent({ socket: hubB.socket, name: 'bob', session: 'bob-1' });
      agents.push(bob);
      await waitFor(
        () => ids.every((id) => bob.pushes.some((p) => p.meta.message_id === id)),
        30_000,
        'all three at bob',
      );
      const later = await alice.ok('send_handoff', { to: 'bob@nodeB', body: `after the restart ${unique()}` });
      await waitFor(() => bob.pushes.some((p) => p.meta.message_id === later.message_id), 30_000, 'the later one');
      const counts = countPushes([bob], new Set([...ids, later.message_id]));
      assert.deepEqual([...counts.unflagged.values()], [1, 1, 1, 1], 'each pushed once');
      assert.match(hubB.log(), /end-to-end encryption on, device \S+ \(restored from /);
    });

    it('a hub that asks for an encrypted room refuses a plaintext one: nothing goes out in the clear', async () => {
      const tag = unique();
      const owner = await user(hs, `plain-${tag}`);
      const careful = await user(hs, `careful-${tag}`);
      const room = `#plain-${tag}:${hs.serverName}`;
      const plain = await matrixHub(hs, { node: `plain${tag}`, user: owner, room, allowed: [careful.userId] });
      hubs.push(plain);
      const hub = await matrixHub(hs, {
        node: `careful${tag}`,
        user: careful,
        room,
        allowed: [owner.userId],
        encrypt: true,
        state: 'refused',
      });
      hubs.push(hub);
      const link = (await snapshot(hub)).link!;
      assert.match(link.error ?? '', /is not end-to-end encrypted, but the Matrix config asks for an encrypted room/);
      assert.equal(link.encryption?.state, 'failed');
      const agent = await connectAgent({ socket: hub.socket, name: 'carefulagent', session: 'c-1' });
      agents.push(agent);
      await agent.ok('send_handoff', { to: 'carefulagent', body: 'local still works' });
      const roomId = (await snapshot(plain)).link!.room!;
      const events = await api(
        hs,
        owner.accessToken,
        'GET',
        `/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=50`,
      );
      assert.deepEqual(
        events.chunk.filter(
          (e: { sender: string; type: string }) => e.sender === careful.userId && e.type !== 'm.room.member',
        ),
        [],
        'the careful hub wrote to the plaintext room',
      );
    });

    it("a device of a hub's account that no node signed for gets no room keys, and what it sends is dropped", async () => {
      // Someone with bob's password (or the homeserver's operator) logs in a second device with crypto.
      const rogueLogin = await login(hsB, b);
      const rogueHs = new Homeserver(
        matrixConfig({ homeserver: hsB.url, room: roomId, accessToken: rogueLogin.accessToken }, 'test'),
      );
      const who = await rogueHs.whoami();
      const rogue = await RoomCrypto.open({
        hs: rogueHs,
        room: roomId,
        storeDir: tempDir('rogue'),
        userId: who.user_id,
        deviceId: who.device_id!,
        allowed: new Set([a.userId, b.userId]),
        hubAccounts: () => new Set(),
        log: () => undefined,
      });
      try {
        // Hub A learns of the new device through its sync's device list changes.
        await waitUntil(
          async () =>
            (await snapshot(hubA)).link!.encryption!.devices.some((d) => d.device === who.device_id) ||
            (await alice.ok('send_handoff', { to: 'bob@nodeB', body: `poke ${unique()}` }), false),
          30_000,
          () => `hub A to see device ${who.device_id}`,
          1000,
        );
        const seen = (await snapshot(hubA)).link!.encryption!.devices.find((d) => d.device === who.device_id);
        assert.equal(seen?.trust, 'refused');
        const sent = await alice.ok('send_handoff', { to: 'bob@nodeB', body: `not for the rogue ${unique()}` });
        await waitFor(() => bob.pushes.some((p) => p.meta.message_id === sent.message_id), 30_000, 'bob has it');
        const event = (await roomEvents()).find((e) => e.type === 'm.room.encrypted' && e.sender === a.userId)!;
        // The rogue device syncs its to-device messages, then tries the newest event of hub A.
        const sync = await api(hsB, rogueLogin.accessToken, 'GET', '/sync?timeout=0');
        await rogue.receive(sync);
        const tried = await rogue.decrypt(event as never);
        assert.equal(tried.ok, false, 'the rogue device read a handoff');
        // No key was ever shared with it (not merely one that came late or was mangled).
        assert.match(!tried.ok ? tried.why : '', /^MissingRoomKey: /);
        // What the rogue device sends, encrypted for everyone, is dropped by hub A as unverified.
        const dropsBefore = (await snapshot(hubA)).link!.dropped?.unverified_device ?? 0;
        const content = await rogue.encrypt('m.room.message', { msgtype: 'm.text', body: 'ack', 'm.relates_to': {} });
        await rogueHs.send(roomId, 'm.room.encrypted', `rogue-${unique()}`, content);
        await waitUntil(
          async () => ((await snapshot(hubA)).link!.dropped?.unverified_device ?? 0) > dropsBefore,
          30_000,
          () => `hub A to drop the rogue's event\n${hubA.log()}`,
        );
        // It rewrites nodeB's announcement without B's device claim (hubs started later would then
        // know no device for nodeB): hub B sees its own account rewrite it and puts its own back.
        const stateOfB = `/rooms/${encodeURIComponent(roomId)}/state/org.handoff.node/nodeB`;
        const announced = await api(hsB, b.accessToken, 'GET', stateOfB);
        const deviceOfB = (await snapshot(hubB)).link!.encryption!.device;
        assert.equal(announced.device?.id, deviceOfB);
        await rogueHs.putState(roomId, 'org.handoff.node', 'nodeB', { ...announced, device: undefined });
        await waitUntil(
          async () => (await api(hsB, b.accessToken, 'GET', stateOfB)).device?.id === deviceOfB,
          30_000,
          () => `hub B to put its announcement back\n${hubB.log()}`,
        );
        // Once: its own echo (keys in the homeserver's order) does not set it going again. A later
        // handoff reaching bob means hub B has read past that echo.
        const after = await alice.ok('send_handoff', { to: 'bob@nodeB', body: `after the rewrite ${unique()}` });
        await waitFor(() => bob.pushes.some((p) => p.meta.message_id === after.message_id), 30_000, 'a later handoff');
        const announcements = (await roomEvents()).filter(
          (e: any) => e.type === 'org.handoff.node' && e.state_key === 'nodeB',
        ).length;
        assert.ok(announcements <= 8, `nodeB announced ${announcements} times`);
      } finally {
        await rogue.close();
        rogueHs.stop();
      }
    });
  });
}

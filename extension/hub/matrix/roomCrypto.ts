// This hub's device in an end-to-end encrypted bus room: matrix-js-sdk's Rust crypto (the
// OlmMachine of matrix-sdk-crypto-wasm), driven by the hub's own sync and outbox. Its store is an
// in-memory IndexedDB made durable in the node's store folder (cryptoStore.ts), saved after every
// operation that changes it and before anything it produced leaves the hub — so a restart is the
// same device with the same sessions, and a Megolm index is never used twice.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as fakeIndexedDb from 'fake-indexeddb';
import {
  CollectStrategy,
  DecryptionErrorCode,
  DecryptionSettings,
  DeviceId,
  DeviceLists,
  EncryptionSettings,
  HistoryVisibility,
  initAsync,
  LocalTrust,
  MegolmDecryptionError,
  OlmMachine,
  RequestType,
  RoomId,
  ToDeviceRequest,
  TrustRequirement,
  UserId,
  type OutgoingRequest,
} from '@matrix-org/matrix-sdk-crypto-wasm';
import { CryptoStore } from './cryptoStore';
import { DeviceClaims, trustOf, type DeviceTrust } from './deviceTrust';
import type { Homeserver, SyncResponse } from './homeserver';
import type { RawEvent } from './wire';
import { KeptEvents } from './keptEvents';
import { replaceDurably } from '../store/replaceDurably';
import { nodeFs } from '../store/storeFs';
import type { EncryptionStatus } from '../../protocol/views';
import type { Log } from '../../protocol/hubLog';

const STORE_NAME = 'handoff-crypto';

export type Decrypted = { ok: true; event: RawEvent; device?: string; trust: DeviceTrust } | { ok: false; why: string };

export class RoomCrypto {
  readonly claims = new DeviceClaims();
  private queue: Promise<unknown> = Promise.resolve();
  private members?: string[];
  private trustByDevice = new Map<string, { user: string; id: string; trust: DeviceTrust }>();
  private closed = false;
  private lastCounts = '';

  private constructor(
    private readonly machine: OlmMachine,
    private readonly store: CryptoStore,
    private readonly hs: Homeserver,
    private readonly room: string,
    readonly userId: string,
    readonly deviceId: string,
    private readonly allowed: ReadonlySet<string>,
    private readonly hubAccounts: () => ReadonlySet<string>,
    /** Events not taken yet: their key has not come, or their device's claim (keptEvents.ts). */
    readonly kept: KeptEvents,
  ) {}

  /** Whether this node has used `room` encrypted: then it never speaks in it in the clear, whatever the homeserver says. */
  static usedEncrypted(storeDir: string, room: string): boolean {
    return existsSync(join(storeDir, encryptedMark(room)));
  }

  /** Opens (or creates) this device's crypto; its store lives in `storeDir`, one file per account and device. */
  static async open(opts: {
    hs: Homeserver;
    room: string;
    storeDir: string;
    userId: string;
    deviceId: string;
    allowed: ReadonlySet<string>;
    hubAccounts: () => ReadonlySet<string>;
    log: Log;
  }): Promise<RoomCrypto> {
    const base = `matrix-crypto-${fileSafe(opts.userId)}-${fileSafe(opts.deviceId)}`;
    const store = new CryptoStore(join(opts.storeDir, `${base}.v8`), `${STORE_NAME}::`);
    // The wasm reaches IndexedDB through the globals; one crypto store per hub process.
    for (const [k, v] of Object.entries(fakeIndexedDb))
      if (k.startsWith('IDB')) (globalThis as Record<string, unknown>)[k] = v;
    (globalThis as Record<string, unknown>).indexedDB = store.factory;
    const how = await store.open();
    await initAsync();
    const machine = await OlmMachine.initialize(
      new UserId(opts.userId),
      new DeviceId(opts.deviceId),
      STORE_NAME,
      undefined,
    );
    try {
      // Keys are shared by the senders' hubs; asking this account's other devices (refused ones) helps nobody.
      machine.roomKeyRequestsEnabled = false;
      const c = new RoomCrypto(
        machine,
        store,
        opts.hs,
        opts.room,
        opts.userId,
        opts.deviceId,
        opts.allowed,
        opts.hubAccounts,
        await KeptEvents.open(join(opts.storeDir, `${base}.undecrypted.json`)),
      );
      await c.serial(async () => {
        await store.save();
        await c.flush();
        await machine.updateTrackedUsers((await c.recipients()).map((u) => new UserId(u)));
        await c.flush();
      });
      await replaceDurably(nodeFs, join(opts.storeDir, encryptedMark(opts.room)), () => Promise.resolve(0));
      opts.log(
        `matrix: end-to-end encryption on, device ${opts.deviceId} (${how === 'restored' ? 'restored from' : 'new, kept in'} ${store.path})`,
      );
      return c;
    } catch (e) {
      machine.close();
      throw e;
    }
  }

  /** The device's Ed25519 key, base64: what the node's device claim signs. */
  get ed25519(): string {
    return this.machine.identityKeys.ed25519.toBase64();
  }

  /** Runs crypto work one piece at a time: the machine and its store see one writer. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = () => {
      if (this.closed) throw new Error('the Matrix device was closed');
      return work();
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** A sync's to-device messages, device list changes and key counts; then what they call for. */
  receive(res: SyncResponse): Promise<void> {
    return this.serial(async () => {
      const lists = new DeviceLists(
        (res.device_lists?.changed ?? []).map((u) => new UserId(u)),
        (res.device_lists?.left ?? []).map((u) => new UserId(u)),
      );
      if (res.device_lists?.left?.length) this.members = undefined;
      const toDevice = res.to_device?.events ?? [];
      const counts = JSON.stringify([res.device_one_time_keys_count, res.device_unused_fallback_key_types]);
      await this.machine.receiveSyncChanges(
        JSON.stringify(toDevice),
        lists,
        new Map(Object.entries(res.device_one_time_keys_count ?? {})),
        res.device_unused_fallback_key_types ? new Set(res.device_unused_fallback_key_types) : undefined,
      );
      // Most syncs bring none of this: the store is only written when one did.
      const changed =
        toDevice.length > 0 ||
        (res.device_lists?.changed?.length ?? 0) > 0 ||
        (res.device_lists?.left?.length ?? 0) > 0 ||
        counts !== this.lastCounts;
      this.lastCounts = counts;
      if (changed) await this.store.save();
      await this.flush();
    });
  }

  /** The room's membership changed: who gets the room key is asked again before the next send. */
  membersChanged(): void {
    this.members = undefined;
  }

  /** Sends what the machine asks for (key uploads, queries, claims, to-device), saving after each answer. */
  private async flush(): Promise<void> {
    for (let round = 0; round < 8; round++) {
      const requests = await this.machine.outgoingRequests();
      const sent = requests.filter((r) => r.type !== RequestType.KeysBackup);
      if (sent.length === 0) return;
      await this.store.save(); // new one-time keys are on disk before the homeserver hears of them
      for (const r of sent) await this.send(r);
    }
  }

  private async send(r: OutgoingRequest): Promise<void> {
    let res: unknown;
    switch (r.type) {
      case RequestType.KeysUpload:
        res = await this.hs.crypto('POST', '/keys/upload', r.body);
        break;
      case RequestType.KeysQuery:
        res = await this.hs.crypto('POST', '/keys/query', r.body);
        break;
      case RequestType.KeysClaim:
        res = await this.hs.crypto('POST', '/keys/claim', r.body);
        break;
      case RequestType.SignatureUpload:
        res = await this.hs.crypto('POST', '/keys/signatures/upload', r.body);
        break;
      case RequestType.ToDevice: {
        if (!(r instanceof ToDeviceRequest)) return;
        res = await this.hs.crypto(
          'PUT',
          `/sendToDevice/${encodeURIComponent(r.event_type)}/${encodeURIComponent(r.txn_id)}`,
          r.body,
        );
        break;
      }
      default:
        return; // room messages and backups: this hub asks for neither
    }
    await this.machine.markRequestAsSent(r.id!, r.type, JSON.stringify(res ?? {}));
    await this.store.save();
  }

  /** The accounts the room key goes to: allowed members of the room, joined or invited (and this one). */
  private async recipients(): Promise<string[]> {
    this.members ??= await this.hs.members(this.room);
    return this.members.filter((u) => u === this.userId || this.allowed.has(u));
  }

  /** Sets each known device's local trust from the node claims: verified, refused (blacklisted), or left unverified. */
  private async settleTrust(users: string[]): Promise<void> {
    const hubs = this.hubAccounts();
    const own = { user: this.userId, id: this.deviceId };
    for (const user of users) {
      const devices = await this.machine.getUserDevices(new UserId(user));
      for (const d of devices.devices()) {
        const known = { user, id: d.deviceId.toString(), ed25519: d.ed25519Key?.toBase64() };
        const trust = trustOf(known, own, this.claims, hubs);
        this.trustByDevice.set(`${user}\n${known.id}`, { user, id: known.id, trust });
        const want =
          trust === 'verified' ? LocalTrust.Verified : trust === 'refused' ? LocalTrust.BlackListed : LocalTrust.Unset;
        if (trust !== 'this hub' && d.localTrustState !== want) await d.setLocalTrust(want);
      }
    }
  }

  /**
   * Encrypts an event for the room: the room key goes first to every device of the allowed
   * members that is not refused. The store is saved before the ciphertext is returned.
   */
  encrypt(type: string, content: object): Promise<Record<string, unknown>> {
    return this.serial(async () => {
      const users = await this.recipients();
      // Each call takes its UserIds (wasm objects passed by value): fresh ones every time.
      const ids = () => users.map((u) => new UserId(u));
      await this.machine.updateTrackedUsers(ids());
      await this.flush(); // device lists of new members
      await this.settleTrust(users);
      const claim = await this.machine.getMissingSessions(ids());
      if (claim) await this.send(claim);
      const settings = new EncryptionSettings();
      settings.sharingStrategy = CollectStrategy.allDevices(); // blacklisted (refused) devices excepted
      settings.historyVisibility = HistoryVisibility.Shared;
      const shares = await this.machine.shareRoomKey(new RoomId(this.room), ids(), settings);
      // The Olm sessions moved on to encrypt these: on disk before any of them leaves.
      if (shares.length) await this.store.save();
      for (const r of shares) await this.send(r);
      const out = await this.machine.encryptRoomEvent(new RoomId(this.room), type, JSON.stringify(content));
      await this.store.save();
      return JSON.parse(out) as Record<string, unknown>;
    });
  }

  /** A room event in the clear, with the device that sent it and what this hub thinks of that device. */
  decrypt(ev: RawEvent): Promise<Decrypted> {
    return this.serial(async () => {
      try {
        const r = await this.machine.decryptRoomEvent(
          JSON.stringify(ev),
          new RoomId(this.room),
          new DecryptionSettings(TrustRequirement.Untrusted),
        );
        const inner = JSON.parse(r.event) as { type?: unknown; content?: unknown };
        if (typeof inner.type !== 'string' || !inner.content || typeof inner.content !== 'object')
          return { ok: false, why: 'the decrypted event has no type or content' };
        const device = r.senderDevice?.toString();
        if (!device) return { ok: false, why: 'the sending device is not known yet' };
        const key = `${ev.sender}\n${device}`;
        await this.settleTrust([ev.sender]);
        if (!this.trustByDevice.has(key)) {
          // A member this hub has not sent to yet: ask for its devices first.
          await this.machine.updateTrackedUsers([new UserId(ev.sender)]);
          await this.flush();
          await this.settleTrust([ev.sender]);
        }
        const trust = this.trustByDevice.get(key)?.trust;
        if (!trust) return { ok: false, why: `device ${device} of ${ev.sender} is not known yet` };
        return {
          ok: true,
          device,
          trust,
          event: { ...ev, type: inner.type, content: inner.content as Record<string, unknown> },
        };
      } catch (e) {
        return { ok: false, why: decryptionFailure(e) };
      }
    });
  }

  status(): EncryptionStatus {
    return {
      state: 'on',
      device: this.deviceId,
      deviceKey: this.ed25519,
      devices: [...this.trustByDevice.values()]
        .map(({ user, id, trust }) => ({ user, device: id, trust }))
        .sort((a, b) => a.user.localeCompare(b.user) || a.device.localeCompare(b.device)),
      waitingForKeys: this.kept.size,
      undecryptable: this.kept.givenUp,
      storeBytes: this.store.bytes,
    };
  }

  /** After the work already queued: a save still running must not land after a new instance opened the file. */
  close(): Promise<void> {
    return this.serial(() => {
      this.closed = true;
      this.machine.close();
      return Promise.resolve();
    });
  }
}

/** A MegolmDecryptionError (not an Error: no message) in words: "MissingRoomKey: …, withheld: …". */
function decryptionFailure(e: unknown): string {
  if (e instanceof MegolmDecryptionError)
    return `${DecryptionErrorCode[e.code] ?? e.code}: ${e.description}${e.maybe_withheld ? ` (withheld: ${e.maybe_withheld})` : ''}`;
  return (e as Error)?.message ?? String(e);
}

function encryptedMark(room: string): string {
  return `matrix-e2ee-${fileSafe(room)}`;
}

function fileSafe(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '_');
}

// The hub's link to other nodes over one Matrix room: finds out who the token belongs to, joins
// (or creates) the bus room, then runs the outbox, the ingest and the node announcement side by
// side, and reports one honest connection state.
import { IDENTITY_PATTERN } from '../bus/identity';
import { isRemote } from '../bus/relay';
import type { Hub } from '../hub';
import type { RemoteLink } from '../remote';
import type { EncryptionStatus, RelayOutcome, LinkStatus } from '../../protocol/views';
import { NodeBindings } from './binding';
import { MatrixConfigError, type MatrixConfig } from './config';
import { Drops } from './drops';
import { canonical, loadNodeKey, signWire, type NodeKey } from './keys';
import { classify, Homeserver, isHomeserverFailure } from './homeserver';
import { Ingest } from './ingest';
import { Outbox, type RoomSend } from './outbox';
import { RoomCrypto } from './roomCrypto';
import { signDevice } from './deviceTrust';
import { personIdentity } from './person';
import { announcement, BATCH_BYTES, NODE_STATE, readAnnouncement } from './wire';

/** Megolm's ciphertext is base64 of the plaintext (×4/3) plus its envelope: a batch that fits under 64 KiB once encrypted. */
const ENCRYPTED_BATCH_BYTES = Math.floor((BATCH_BYTES * 3) / 4) - 2048;
import type { Log, LogLevel } from '../../protocol/hubLog';

export class MatrixLink implements RemoteLink {
  private readonly hs: Homeserver;
  private state: LinkStatus['state'] = 'connecting';
  private error?: string;
  private userId?: string;
  private roomId?: string;
  private lastSyncAt?: number;
  private outbox?: Outbox;
  private ingest?: Ingest;
  private stopped = false;
  private stopChanges?: () => void;
  private announced?: string;
  private announcing = false;
  private announceError?: string;
  private readonly drops: Drops;
  private bindings?: NodeBindings;
  private key?: NodeKey;
  private deviceId?: string;
  private crypto?: RoomCrypto;
  /** The room is encrypted and this hub's device could not be set up (or the homeserver denies it is encrypted). */
  private cryptoFailure?: string;
  private reconnecting = false;

  constructor(
    private readonly hub: Hub,
    private readonly config: MatrixConfig,
    private readonly log: Log,
  ) {
    if (!IDENTITY_PATTERN.test(`x@${hub.node}`)) {
      throw new MatrixConfigError(
        `This hub's node name "${hub.node}" cannot qualify identities on Matrix (letters, digits, '.', '_', ':' or '-', up to 128): start the hub with --node NAME.`,
      );
    }
    this.hs = new Homeserver(config);
    this.drops = new Drops((line, level) => this.log(`matrix: ${line}`, level));
  }

  /** Connects in the background; status() says how far it got. */
  start(): void {
    this.log(
      `matrix: connecting to ${this.config.homeserver} (token from ${this.config.tokenSource}), room ${this.config.room}`,
    );
    void this.connect();
  }

  private async connect(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        const me = await this.hs.whoami();
        this.userId = me.user_id;
        this.deviceId = me.device_id;
        const invite = this.config.allowedSenders.filter((u) => u !== me.user_id);
        this.roomId = await this.hs.joinOrCreate(this.config.room, invite, this.config.encrypt);
        if (await this.hs.encryption(this.roomId)) await this.openCrypto();
        else if (this.config.encrypt || RoomCrypto.usedEncrypted(this.hub.options.storeDir, this.roomId)) {
          // A homeserver must not be able to talk a hub into plaintext.
          this.cryptoFailure = `the homeserver says room ${this.roomId} is not end-to-end encrypted, but ${this.config.encrypt ? 'the Matrix config asks for an encrypted room' : 'this node has used it encrypted'}: nothing is sent to or read from it in the clear`;
          this.trouble(this.cryptoFailure, true);
        }
        break;
      } catch (e) {
        const f = classify(e);
        this.trouble(f.why, f.kind !== 'retry');
        await new Promise((r) => setTimeout(r, f.kind === 'retry' ? Math.min(250 * 2 ** attempt, 2000) : 10_000));
      }
    }
    if (this.stopped || !this.roomId || !this.userId) return;
    if (this.cryptoFailure) return; // never plaintext into an encrypted room; trouble() said why
    this.log(
      `matrix: ${this.userId} in room ${this.roomId} as node ${this.hub.node}${this.crypto ? ' (end-to-end encrypted)' : ''}`,
    );
    try {
      this.key = loadNodeKey(this.hub.options.storeDir);
    } catch (e) {
      this.log(
        `matrix: no node key (${(e as Error).message}): this node's events go unsigned, so hubs sharing its account cannot tell it apart`,
      );
    }
    const key = this.key;
    const signer = key ? (wire: object) => signWire(key, wire) : undefined;
    const hooks = {
      log: (line: string, level?: LogLevel) => this.log(`matrix: ${line}`, level),
      onTrouble: (why: string, refused: boolean) => this.trouble(why, refused),
    };
    const room = this.roomId;
    const crypto = this.crypto;
    const put: RoomSend = crypto
      ? async (type, txnId, content) =>
          this.hs.send(room, 'm.room.encrypted', txnId, await crypto.encrypt(type, content))
      : (type, txnId, content) => this.hs.send(room, type, txnId, content);
    this.outbox = new Outbox(
      this.hub,
      put,
      this.config.outboxBatch,
      signer,
      {
        ...hooks,
        onSuccess: () => this.healthy(),
      },
      crypto ? ENCRYPTED_BATCH_BYTES : undefined,
    );
    const allowed = new Set([...this.config.allowedSenders, this.userId]);
    this.bindings = new NodeBindings(this.hub, this.config.nodes, this.userId, this.drops, this.key?.publicKey);
    void this.knowPeople();
    if (crypto) await this.knowDevices(crypto);
    this.ingest = new Ingest(
      this.hub,
      this.hs,
      this.roomId,
      allowed,
      this.userId,
      this.bindings,
      this.drops,
      this.config.syncTimelineLimit,
      {
        ...hooks,
        onEncrypted: () => this.reconnectEncrypted(),
        onOwnAnnouncement: (content) => {
          // Another device of this account (one no node vouches for) rewrote it: put ours back.
          // Canonical on both sides: the homeserver may give the keys back in another order.
          if (this.announced && canonical(content) !== canonical(JSON.parse(this.announced))) {
            this.announced = undefined;
            void this.announce();
          }
        },
        onOwnNodeClaimed: () => {
          this.announced = undefined;
          void this.announce();
        },
        onSynced: () => {
          this.lastSyncAt = Date.now();
          if (this.state !== 'connected') this.outbox?.poke(); // back after an outage: skip the backoff
          this.healthy();
        },
      },
      crypto,
    );
    this.stopChanges = this.hub.onChanged(() => {
      this.outbox?.poke();
      void this.announce();
    });
    void this.outbox.run();
    void this.ingest.run();
    void this.announce();
  }

  /** This hub's device for an encrypted room; if it cannot be had, the link stays refused (and says why). */
  private async openCrypto(): Promise<void> {
    if (this.crypto) return;
    try {
      if (!this.deviceId) throw new Error('the access token has no device (whoami gave no device_id)');
      const bindings = () => this.bindings;
      this.crypto = await RoomCrypto.open({
        hs: this.hs,
        room: this.roomId!,
        storeDir: this.hub.options.storeDir,
        userId: this.userId!,
        deviceId: this.deviceId,
        allowed: new Set(this.config.allowedSenders),
        hubAccounts: () => bindings()?.accounts() ?? new Set(),
        log: this.log,
      });
      this.cryptoFailure = undefined;
    } catch (e) {
      if (isHomeserverFailure(e)) throw e; // the homeserver's trouble: connect() retries
      this.cryptoFailure = `the room is end-to-end encrypted and this hub's device could not be set up (${(e as Error).message}); nothing is sent to or read from it`;
      this.trouble(this.cryptoFailure, true);
    }
  }

  /** Device claims already in the room's state (a restart syncs from its saved position, past them). */
  private async knowDevices(crypto: RoomCrypto): Promise<void> {
    try {
      for (const ev of await this.hs.state(this.roomId!)) {
        if (ev.type !== NODE_STATE || ev.state_key === this.hub.node) continue;
        const a = readAnnouncement(ev);
        if (typeof a === 'string' || !this.bindings!.speaksFor(a.node, ev.sender)) continue;
        crypto.claims.note(a.node, ev.sender, this.bindings!.keyOf(a.node), a.device);
      }
    } catch (e) {
      this.log(
        `matrix: could not read the room's node announcements (${classify(e).why}); devices are verified as announcements arrive`,
      );
    }
  }

  /** The room was encrypted under us: start again, with a device. */
  private reconnectEncrypted(): void {
    if (this.crypto || this.stopped || this.reconnecting) return;
    this.reconnecting = true;
    this.log("matrix: the room turned on end-to-end encryption; reconnecting with this hub's device");
    this.stopChanges?.();
    this.outbox?.stop();
    this.ingest?.stop();
    this.announced = undefined;
    void this.connect().finally(() => (this.reconnecting = false));
  }

  private trouble(why: string, refused: boolean): void {
    if (this.stopped) return;
    const state = refused ? 'refused' : 'retrying';
    if (this.error === why && this.state === state) return;
    if (this.error !== why) this.log(`matrix: ${state}: ${why}`, 'warn');
    this.state = state;
    this.error = why;
    this.hub.linkChanged();
  }

  private healthy(): void {
    if (this.state === 'connected') return;
    this.log('matrix: connected');
    this.state = 'connected';
    this.error = undefined;
    this.hub.linkChanged();
  }

  /** Publishes this node's identities as room state whenever they change (latest wins). */
  private async announce(): Promise<void> {
    if (this.announcing || !this.roomId || this.stopped) return;
    const identities = Object.values(this.hub.state.identities)
      .filter((i) => !isRemote(i.name))
      .map((i) => ({ name: i.name, roles: i.roles }))
      .sort((a, b) => a.name.localeCompare(b.name));
    const device =
      this.crypto && this.key && this.userId
        ? signDevice(this.key, this.hub.node, this.userId, this.crypto.deviceId, this.crypto.ed25519)
        : undefined;
    const content = announcement(this.hub.node, identities, this.key?.publicKey, device);
    const signature = JSON.stringify(content);
    // Nothing to say until a first identity connects: state events count against rate limits.
    if (signature === this.announced || identities.length === 0) return;
    this.announcing = true;
    try {
      await this.hs.putState(this.roomId, NODE_STATE, this.hub.node, content);
      this.announced = signature;
      this.announceError = undefined;
    } catch (e) {
      const why = classify(e).why;
      if (why !== this.announceError)
        this.log(
          `matrix: announcing this node's identities failed (retrying; other nodes cannot address them until it works): ${why}`,
        );
      this.announceError = why;
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      this.announcing = false;
    }
    void this.announce(); // changed meanwhile, or failed: go again
  }

  /** The configured people are addressable before they first write in the room. */
  private async knowPeople(): Promise<void> {
    for (const user of this.config.people) {
      const name = personIdentity(user);
      if (!name) {
        this.log(`matrix: ${user} (in "people") cannot be written as an identity name; it is not addressable`, 'warn');
        continue;
      }
      if (this.hub.state.identities[name]) continue;
      await this.hub
        .applyRemote([{ type: 'identity', name, at: Date.now(), roles: ['person'] }])
        .catch((e) => this.log(`matrix: could not record the person ${name}: ${(e as Error).message}`, 'error'));
    }
  }

  whereIs(messageId: string, waitMs: number): Promise<RelayOutcome> {
    if (!this.outbox) {
      return Promise.resolve({
        state: 'in_outbox',
        note: `Stored durably; Matrix is ${this.state} (${this.error ?? 'joining the room'}), so it is not on the homeserver yet. It is sent with its persisted txnId once connected.`,
        last_error: this.error,
      });
    }
    return this.outbox.whereIs(messageId, waitMs);
  }

  status(): LinkStatus {
    return {
      transport: 'matrix',
      state: this.stopped ? 'stopped' : this.state,
      homeserver: this.config.homeserver,
      userId: this.userId,
      room: this.roomId ?? this.config.room,
      error: this.error,
      outbox: Object.keys(this.hub.state.relay?.outbox ?? {}).length,
      lastSyncAt: this.lastSyncAt,
      advisoryReads: this.ingest?.advisoryReads() ?? {},
      advisoryReadsNote:
        'Matrix m.read receipts: a Matrix user (a person in Element, or any session of a hub on that account) read up to this handoff. Per user, not per session; advisory, never an ACK.',
      nodes: this.bindings?.all(),
      dropped: this.drops.summary(),
      notices: this.bindings?.notices() ?? [],
      encryption: this.encryption(),
    };
  }

  private encryption(): EncryptionStatus | undefined {
    if (this.cryptoFailure)
      return { state: 'failed', error: this.cryptoFailure, devices: [], waitingForKeys: 0, undecryptable: 0 };
    return this.crypto?.status();
  }

  close(): Promise<void> {
    this.stopped = true;
    this.stopChanges?.();
    this.outbox?.stop();
    this.ingest?.stop();
    this.hs.stop();
    return this.crypto?.close().catch(() => undefined) ?? Promise.resolve();
  }
}

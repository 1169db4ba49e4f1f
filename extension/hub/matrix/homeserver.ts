// The homeserver's client-server API, through matrix-js-sdk's authenticated HTTP layer. Only the
// calls the bus needs; the SDK's own sync loop is not used (it keeps its position in memory,
// does not backfill limited syncs, and backs off ~17 s after an outage) — ingest.ts owns sync.
import { ConnectionError, createClient, MatrixError, Method, type MatrixClient } from 'matrix-js-sdk/lib/matrix.js';
import { logger as sdkLogger } from 'matrix-js-sdk/lib/logger.js';
import type { MatrixConfig } from './config';
import { NODE_STATE, type RawEvent } from './wire';
import type { Log } from '../../protocol/hubLog';

/** The SDK logs requests at debug level to the console, which may be the editor's JSON-RPC
 * channel: drop debug/info, send warnings to our log. Its child loggers copy this factory. */
export function quietSdkLogs(log: Log): void {
  // It is a loglevel logger underneath; its type does not say so.
  const root = sdkLogger as unknown as {
    methodFactory: (method: string) => (...args: unknown[]) => void;
    rebuild(): void;
  };
  root.methodFactory = (method) =>
    method === 'warn' || method === 'error'
      ? (...args) => log(`matrix-js-sdk: ${args.map(String).join(' ')}`, method)
      : () => undefined;
  root.rebuild();
}

/** How a failed request should be handled; `status` is the HTTP status when there was one. */
export type Failure =
  | { kind: 'retry'; afterMs?: number; why: string; status?: number }
  | { kind: 'refused'; why: string; status?: number }
  | { kind: 'permanent'; why: string; status?: number };

/** Only what can never succeed is permanent; anything else (a restarting homeserver answers
 * oddly too) is retried, because giving up on an event loses a handoff. */
const PERMANENT = new Set(['M_TOO_LARGE', 'M_BAD_JSON', 'M_NOT_JSON']);

export function classify(e: unknown): Failure {
  if (e instanceof MatrixError) {
    const why = `${e.httpStatus ?? ''} ${e.errcode ?? ''} ${e.data?.error ?? ''}`.trim();
    const status = e.httpStatus;
    if (e.isRateLimitError()) return { kind: 'retry', afterMs: e.getRetryAfterMs() ?? undefined, why, status };
    if (status === 401 || status === 403) return { kind: 'refused', why, status };
    if (status === 413 || PERMANENT.has(e.errcode ?? '')) return { kind: 'permanent', why, status };
    return { kind: 'retry', why, status };
  }
  if (e instanceof ConnectionError)
    return { kind: 'retry', why: `homeserver unreachable (${(e.cause as Error | undefined)?.message ?? e.message})` };
  if ((e as Error)?.name === 'AbortError' || (e as Error)?.name === 'TimeoutError')
    return { kind: 'retry', why: 'request timed out' };
  return { kind: 'retry', why: (e as Error)?.message ?? String(e) };
}

/** A failed request to the homeserver (as opposed to a fault of our own): worth retrying. */
export function isHomeserverFailure(e: unknown): boolean {
  return e instanceof MatrixError || e instanceof ConnectionError;
}

export interface SyncResponse {
  next_batch: string;
  rooms?: { join?: Record<string, JoinedRoom> };
  /** For the device's crypto (E2EE rooms): to-device messages, device list changes, key counts. */
  to_device?: { events?: unknown[] };
  device_lists?: { changed?: string[]; left?: string[] };
  device_one_time_keys_count?: Record<string, number>;
  device_unused_fallback_key_types?: string[];
}

export interface JoinedRoom {
  state?: { events?: RawEvent[] };
  timeline?: { events?: RawEvent[]; limited?: boolean; prev_batch?: string };
  ephemeral?: { events?: { type: string; content: unknown }[] };
}

const enc = encodeURIComponent;
export const MEGOLM = 'm.megolm.v1.aes-sha2';

export class Homeserver {
  private readonly client: MatrixClient;

  constructor(readonly config: MatrixConfig) {
    this.client = createClient({ baseUrl: config.homeserver, accessToken: config.accessToken, logger: sdkLogger });
  }

  private request<T>(
    method: Method,
    path: string,
    query?: Record<string, string>,
    body?: object,
    timeoutMs = 20_000,
    signal?: AbortSignal,
  ): Promise<T> {
    return this.client.http.authedRequest<T>(method, path, query, body as Record<string, unknown> | undefined, {
      localTimeoutMs: timeoutMs,
      abortSignal: signal,
    });
  }

  whoami(): Promise<{ user_id: string; device_id?: string }> {
    return this.request(Method.Get, '/account/whoami');
  }

  /** A request the crypto machine made (keys upload/query/claim, to-device, signatures): its JSON body as given. */
  crypto<T>(method: 'POST' | 'PUT', path: string, body: string): Promise<T> {
    return this.request<T>(method === 'POST' ? Method.Post : Method.Put, path, undefined, JSON.parse(body) as object);
  }

  /** The room's encryption state event's content, or undefined for a plaintext room. */
  async encryption(room: string): Promise<{ algorithm?: string } | undefined> {
    try {
      return await this.request(Method.Get, `/rooms/${enc(room)}/state/m.room.encryption/`);
    } catch (e) {
      if (e instanceof MatrixError && e.errcode === 'M_NOT_FOUND') return undefined;
      throw e;
    }
  }

  /** The room's current state events (node announcements after a restart from a saved position). */
  state(room: string): Promise<RawEvent[]> {
    return this.request(Method.Get, `/rooms/${enc(room)}/state`);
  }

  /** Members who are in the room or invited to it: an invited person reads what was sent before they joined. */
  async members(room: string): Promise<string[]> {
    const r = await this.request<{ chunk?: { state_key?: string; content?: { membership?: string } }[] }>(
      Method.Get,
      `/rooms/${enc(room)}/members`,
      { not_membership: 'leave' },
    );
    return (r.chunk ?? [])
      .filter((e) => e.content?.membership === 'join' || e.content?.membership === 'invite')
      .flatMap((e) => (typeof e.state_key === 'string' ? [e.state_key] : []));
  }

  /** Joins the room (an invite or a public alias), or creates the alias's room, invite-only, inviting the allowed senders. */
  async joinOrCreate(room: string, invite: string[], encrypted = false): Promise<string> {
    try {
      return (await this.request<{ room_id: string }>(Method.Post, `/join/${enc(room)}`, undefined, {})).room_id;
    } catch (e) {
      if (!(e instanceof MatrixError) || e.errcode !== 'M_NOT_FOUND' || !room.startsWith('#')) throw e;
    }
    const alias = room.slice(1, room.indexOf(':'));
    try {
      const created = await this.request<{ room_id: string }>(Method.Post, '/createRoom', undefined, {
        room_alias_name: alias,
        preset: 'private_chat',
        name: `Handoff bus ${room}`,
        invite,
        // Every hub announces its identities as room state; members need no moderator rights for it.
        power_level_content_override: { events: { [NODE_STATE]: 0 } },
        ...(encrypted
          ? { initial_state: [{ type: 'm.room.encryption', state_key: '', content: { algorithm: MEGOLM } }] }
          : {}),
        topic: 'Handoff: a message bus between coding agents. Handoffs, ACKs and results are posted here by the hubs.',
      });
      return created.room_id;
    } catch (e) {
      // Another hub created it a moment ago: join that one.
      if (e instanceof MatrixError && e.errcode === 'M_ROOM_IN_USE')
        return (await this.request<{ room_id: string }>(Method.Post, `/join/${enc(room)}`, undefined, {})).room_id;
      throw e;
    }
  }

  /** Idempotent by txnId: the homeserver answers a repeated txnId with the first event id. */
  async send(room: string, type: string, txnId: string, content: object): Promise<string> {
    return (
      await this.request<{ event_id: string }>(
        Method.Put,
        `/rooms/${enc(room)}/send/${enc(type)}/${enc(txnId)}`,
        undefined,
        content,
      )
    ).event_id;
  }

  async putState(room: string, type: string, stateKey: string, content: object): Promise<void> {
    await this.request(Method.Put, `/rooms/${enc(room)}/state/${enc(type)}/${enc(stateKey)}`, undefined, content);
  }

  sync(since: string | undefined, filter: object, timeoutMs: number, signal: AbortSignal): Promise<SyncResponse> {
    const query: Record<string, string> = { filter: JSON.stringify(filter), timeout: String(timeoutMs) };
    if (since) query.since = since;
    return this.request(Method.Get, '/sync', query, undefined, timeoutMs + 20_000, signal);
  }

  /** One page of the room's timeline, newest first from `from` (dir b). */
  messages(
    room: string,
    from: string,
    limit: number,
    signal: AbortSignal,
  ): Promise<{ chunk: RawEvent[]; end?: string }> {
    return this.request(
      Method.Get,
      `/rooms/${enc(room)}/messages`,
      { from, dir: 'b', limit: String(limit) },
      undefined,
      20_000,
      signal,
    );
  }

  stop(): void {
    this.client.stopClient();
    this.client.http.abort();
  }
}

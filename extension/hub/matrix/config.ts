// Matrix settings for a hub, from a JSON file (`handoff hub --matrix-config FILE`), from the
// environment, or from the editor's handoff/matrix/connect request. The access token is read
// from the file, a token file or an env var, and never appears in a log line or an error.
// This file must not import matrix-js-sdk: the hub reads it before deciding to load the SDK.
import { readFileSync } from 'node:fs';

export interface MatrixConfig {
  homeserver: string;
  accessToken: string;
  /** The bus room: `!id:server`, or `#alias:server` (created, invite-only, if it does not exist). */
  room: string;
  /** Matrix users whose handoffs and receipts are accepted. Fail closed: nobody else, ever. */
  allowedSenders: string[];
  /** Timeline events per sync; a longer gap is backfilled through /messages. */
  syncTimelineLimit: number;
  /** Node → the Matrix account that speaks for it, fixed here instead of by first announcement;
   * the only way for one account to speak for several nodes. */
  nodes: Record<string, string>;
  /** People (Matrix users) addressable from the start, before they write in the room. */
  people: string[];
  /** Outbox entries per Matrix event at most, when a backlog waits (1: one event per entry). */
  outboxBatch: number;
  /** A room the hub creates is end-to-end encrypted. (A joined room's own state decides for it.) */
  encrypt: boolean;
  /** Where the token came from, for logs (never the token). */
  tokenSource: string;
}

/** What a config file or the editor's connect request holds. */
export interface MatrixSettings {
  homeserver?: unknown;
  accessToken?: unknown;
  accessTokenFile?: unknown;
  room?: unknown;
  allowedSenders?: unknown;
  syncTimelineLimit?: unknown;
  nodes?: unknown;
  people?: unknown;
  outboxBatch?: unknown;
  encrypt?: unknown;
}

export class MatrixConfigError extends Error {}

const USER_ID = /^@[^:\s]+:\S+$/;
const ROOM = /^(![^\s]+|#[^:\s]+:\S+)$/; // room version 12 ids carry no server name
const NODE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

function fail(where: string, what: string): never {
  throw new MatrixConfigError(`Matrix configuration (${where}): ${what}`);
}

/** Validates settings; `where` names their source in errors. */
export function matrixConfig(s: MatrixSettings, where: string, env: NodeJS.ProcessEnv = process.env): MatrixConfig {
  const homeserver = typeof s.homeserver === 'string' ? s.homeserver.replace(/\/+$/, '') : '';
  if (!/^https?:\/\/[^\s/]+/.test(homeserver))
    fail(where, 'homeserver must be an http(s) URL such as https://matrix.example.org');
  if (typeof s.room !== 'string' || !ROOM.test(s.room))
    fail(where, 'room must be a room id (!id:server) or an alias (#name:server)');
  const allowed = s.allowedSenders ?? [];
  if (!Array.isArray(allowed) || !allowed.every((u) => typeof u === 'string' && USER_ID.test(u))) {
    fail(
      where,
      'allowedSenders must be a list of Matrix user ids such as "@bob:example.org" (your own account is always allowed)',
    );
  }
  let accessToken: string;
  let tokenSource: string;
  if (typeof s.accessToken === 'string' && s.accessToken.trim()) {
    accessToken = s.accessToken.trim();
    tokenSource = where;
  } else if (typeof s.accessTokenFile === 'string' && s.accessTokenFile) {
    try {
      accessToken = readFileSync(s.accessTokenFile, 'utf8').trim();
    } catch (e) {
      fail(
        where,
        `cannot read accessTokenFile ${s.accessTokenFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    tokenSource = `file ${s.accessTokenFile}`;
  } else if (env.HANDOFF_MATRIX_TOKEN?.trim()) {
    accessToken = env.HANDOFF_MATRIX_TOKEN.trim();
    tokenSource = 'env HANDOFF_MATRIX_TOKEN';
  } else {
    fail(where, 'no access token: give accessToken, accessTokenFile, or the HANDOFF_MATRIX_TOKEN env var');
  }
  if (!accessToken) fail(where, `the access token from ${tokenSource} is empty`);
  const limit = s.syncTimelineLimit === undefined ? 50 : Number(s.syncTimelineLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    fail(where, 'syncTimelineLimit must be an integer from 1 to 1000');
  const nodes = s.nodes ?? {};
  if (
    typeof nodes !== 'object' ||
    Array.isArray(nodes) ||
    !Object.entries(nodes).every(
      ([n, u]) => NODE.test(n) && !n.startsWith('matrix:') && typeof u === 'string' && USER_ID.test(u),
    )
  ) {
    fail(
      where,
      'nodes must map node names to the Matrix user that speaks for each, such as {"laptop:web": "@bob:example.org"} (names starting with "matrix:" are for people)',
    );
  }
  const people = s.people ?? [];
  if (!Array.isArray(people) || !people.every((u) => typeof u === 'string' && USER_ID.test(u)))
    fail(where, 'people must be a list of Matrix user ids such as "@carol:example.org"');
  const batch = s.outboxBatch === undefined ? 100 : Number(s.outboxBatch);
  if (!Number.isInteger(batch) || batch < 1 || batch > 200) fail(where, 'outboxBatch must be an integer from 1 to 200');
  if (s.encrypt !== undefined && typeof s.encrypt !== 'boolean') fail(where, 'encrypt must be true or false');
  return {
    homeserver,
    accessToken,
    encrypt: s.encrypt === true,
    room: s.room,
    allowedSenders: allowed as string[],
    syncTimelineLimit: limit,
    tokenSource,
    nodes: nodes as Record<string, string>,
    people: people as string[],
    outboxBatch: batch,
  };
}

/**
 * The headless hub's Matrix config: `--matrix-config FILE` (JSON), else HANDOFF_MATRIX_CONFIG,
 * else HANDOFF_MATRIX_HOMESERVER + HANDOFF_MATRIX_ROOM (+ HANDOFF_MATRIX_ALLOWED, comma
 * separated). Undefined when none is given: Matrix stays off and its SDK is never loaded.
 */
export function loadMatrixConfig(
  file: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): MatrixConfig | undefined {
  const path = file ?? env.HANDOFF_MATRIX_CONFIG;
  if (path) {
    let settings: MatrixSettings;
    try {
      settings = JSON.parse(readFileSync(path, 'utf8')) as MatrixSettings;
    } catch (e) {
      // Not the parser's message: it quotes the file's text, which may hold the token.
      const code = (e as NodeJS.ErrnoException).code;
      fail(path, code ? `cannot read it (${code})` : 'it is not valid JSON');
    }
    return matrixConfig(settings, path, env);
  }
  if (!env.HANDOFF_MATRIX_HOMESERVER) return undefined;
  return matrixConfig(
    {
      homeserver: env.HANDOFF_MATRIX_HOMESERVER,
      room: env.HANDOFF_MATRIX_ROOM,
      allowedSenders: (env.HANDOFF_MATRIX_ALLOWED ?? '')
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean),
      accessTokenFile: env.HANDOFF_MATRIX_TOKEN_FILE,
      syncTimelineLimit: env.HANDOFF_MATRIX_SYNC_LIMIT,
      // node=@user:server pairs, comma separated
      nodes: env.HANDOFF_MATRIX_NODES
        ? Object.fromEntries(
            env.HANDOFF_MATRIX_NODES.split(',')
              .map((p) => p.trim())
              .filter(Boolean)
              .map((p) => [p.slice(0, p.lastIndexOf('=')), p.slice(p.lastIndexOf('=') + 1)]),
          )
        : undefined,
      encrypt: env.HANDOFF_MATRIX_ENCRYPT === undefined ? undefined : env.HANDOFF_MATRIX_ENCRYPT === '1',
      people: (env.HANDOFF_MATRIX_PEOPLE ?? '')
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean),
    },
    'environment',
    env,
  );
}

// The control requests' params schemas, checked by the hub before any handler runs (the socket is
// open to any local process of the user, so a request is input like any other). Apart from
// control.ts so the editor's bundle, which only sends requests, does not carry zod.
import { z } from 'zod';
import { IDENTITY_PATTERN, MESSAGE_ID_PATTERN, NO_NUL_PATTERN } from './names';
import { SEARCH_STATES } from './views';

const identity = z.string().regex(IDENTITY_PATTERN, "must be an identity name: letters, digits, '.', '_' or '-'");
const messageId = z.string().regex(MESSAGE_ID_PATTERN, 'must be a 26-character message id');
/** What a recipient's address may be: a name, `role:NAME` or `*`; resolved and checked by the bus. */
const address = z.string().min(1).max(200);

export const sendParams = z
  .object({
    /** The sending identity, e.g. the person at the editor. */
    as: identity,
    to: z.array(address).min(1).max(64),
    body: z.string().max(1 << 20), // the bus refuses past its own, smaller limit with the exact size
    thread: z.string().max(200).optional(),
    replyTo: messageId.optional(),
    requiresAck: z.boolean().optional(),
    slaSeconds: z
      .number()
      .int()
      .min(1)
      .max(7 * 86400)
      .optional(),
    idempotencyKey: z.string().min(1).max(200).regex(NO_NUL_PATTERN, 'must not contain NUL').optional(),
    insist: z.boolean().optional(),
    /** Whom to escalate to if it stays unacknowledged past its chase; default: this hub's person. */
    escalateTo: identity.optional(),
    /**
     * The person sends it (the editor, `handoff send` without --as): it reads as theirs, not an
     * agent's; from the CLI it goes as the person the hub's editor windows name, if one does.
     */
    asPerson: z.boolean().optional(),
  })
  .strict();

/** An editor window: who sits at it, whether it has focus, whom their unanswered handoffs escalate to. */
export const presenceParams = z
  .object({
    identity,
    roles: z.array(z.string().regex(IDENTITY_PATTERN, 'must be a role name')).max(32).optional(),
    focused: z.boolean(),
    escalateTo: identity.optional(),
    wakeIdleAgents: z.enum(['off', 'ask', 'on']).optional(),
    /** The window's extension host (its pid): the process that starts VS Code's own agent's MCP server. */
    extensionHost: z.number().int().positive().optional(),
  })
  .strict();

export const inboxParams = z
  .object({
    identity,
    unreadOnly: z.boolean().optional(),
    limit: z.number().int().min(1).max(200).optional(),
  })
  .strict();

export const messageParams = z.object({ id: messageId }).strict();

export const receiptParams = z
  .object({
    as: identity,
    id: messageId,
    kind: z.enum(['read', 'ack', 'result']),
    outcome: z.enum(['done', 'stuck', 'rejected']).optional(),
    summary: z.string().min(1).max(8192).optional(),
  })
  .strict()
  .refine((p) => (p.kind === 'result') === (p.outcome !== undefined), {
    message: 'a result needs an outcome (done, stuck or rejected); read and ack take none',
  });

export const actionParams = z
  .object({
    id: messageId,
    /** Who asked: the person at the editor or the CLI user. */
    by: identity,
    note: z.string().max(2000).optional(),
  })
  .strict();

/**
 * Connects this hub to Matrix now (replacing any current link). The extension keeps the access
 * token in SecretStorage and passes it here or, at hub start, in the HANDOFF_MATRIX_TOKEN env var;
 * the hub never writes it anywhere. The hub checks these further (matrix/config.ts) and says which
 * field is wrong without echoing the token.
 */
export const matrixConnectParams = z
  .object({
    homeserver: z.string().min(1).max(2048),
    accessToken: z.string().min(1).max(4096),
    /** `!id:server`, or `#alias:server` (created invite-only, allowed senders invited, if missing). */
    room: z.string().min(1).max(512),
    /** Matrix user ids whose handoffs are accepted; the hub's own account always is. */
    allowedSenders: z.array(z.string().min(1).max(255)).max(1000).optional(),
    /** Create the room end-to-end encrypted, if the hub creates it. */
    encrypt: z.boolean().optional(),
  })
  .strict();

/** A history search from the CLI or the editor: the person's, over everything, or narrowed to what `as` may see. */
export const searchParams = z
  .object({
    as: identity.optional(),
    text: z.string().max(1000).optional(),
    from: identity.optional(),
    to: identity.optional(),
    thread: z.string().min(1).max(256).optional(),
    state: z.enum(SEARCH_STATES).optional(),
    since: z.number().int().nonnegative().optional(),
    until: z.number().int().nonnegative().optional(),
    limit: z.number().int().min(1).max(500).default(20),
  })
  .strict();

/** How much history a store keeps (retention.json in the store folder): neither is everything. */
export const retentionPolicy = z
  .object({
    /** Sealed history segments whose newest handoff settled more days ago than this go. */
    keepDays: z.number().int('must be a whole number of days').min(1).max(36_500).optional(),
    /** The oldest sealed segments go while history is larger than this. */
    keepGiB: z.number().finite().positive().max(1_048_576).optional(),
  })
  .strict();
export type RetentionPolicy = z.infer<typeof retentionPolicy>;

/** Reads the store's retention; with `set`, replaces it first (an empty object keeps everything). */
export const retentionParams = z.object({ set: retentionPolicy.optional() }).strict();

/** A page of `handoff export`: settled handoffs sent in [since, until), then the open ones if asked. */
export const exportParams = z
  .object({
    as: identity.optional(),
    since: z.number().int().nonnegative().optional(),
    until: z.number().int().nonnegative().optional(),
    open: z.boolean().optional(),
    /** The `next` of the page before. */
    after: z.string().max(64).optional(),
    limit: z.number().int().min(1).max(1000).default(200),
  })
  .strict();

/**
 * Links another repository on this machine (`link`: its folder, absolute), removes one (`unlink`),
 * or names this one (`name`, only before its first link); with none, reads the links.
 */
export const linksParams = z
  .object({
    link: z.string().min(1).max(4096).optional(),
    unlink: z.string().min(1).max(4096).optional(),
    name: z.string().max(64).optional(),
  })
  .strict();

/** Each request's schema by method; control.ts infers the params types from these. */
export const PARAMS = {
  'handoff/send': sendParams,
  'handoff/inbox': inboxParams,
  'handoff/presence': presenceParams,
  'handoff/message': messageParams,
  'handoff/receipt': receiptParams,
  'handoff/chase': actionParams,
  'handoff/resolve': actionParams,
  'handoff/matrix/connect': matrixConnectParams,
  'handoff/search': searchParams,
  'handoff/retention': retentionParams,
  'handoff/export': exportParams,
  'handoff/links': linksParams,
} as const;

export type ValidatedMethod = keyof typeof PARAMS;

/** The params, or a message naming each bad field. */
export function checkParams(
  method: ValidatedMethod,
  params: unknown,
): { ok: true; params: unknown } | { ok: false; why: string } {
  const r = PARAMS[method].safeParse(params);
  if (r.success) return { ok: true, params: r.data };
  return {
    ok: false,
    why: `${method}: ${r.error.issues.map((i) => `${i.path.join('.') || 'params'} ${i.message}`).join('; ')}`,
  };
}

// The control protocol's inputs, checked at run time: the editor and the CLI are trusted callers,
// but the socket is open to any local process of the user, so a request is input like any other.
// Each schema must produce exactly the params type both ends compile against (shared/protocol.ts).
import { z } from 'zod';
import type { ActionParams, InboxParams, MessageParams, ReceiptParams, SendParams } from '../shared/protocol';
import { IDENTITY_PATTERN, MESSAGE_ID_PATTERN } from './bus/identity';

const identity = z.string().regex(IDENTITY_PATTERN, "must be an identity name: letters, digits, '.', '_' or '-'");
const messageId = z.string().regex(MESSAGE_ID_PATTERN, 'must be a 26-character message id');
/** What a recipient's address may be: a name, `role:NAME` or `*`; resolved and checked by the bus. */
const address = z.string().min(1).max(200);

export const sendParams: z.ZodType<SendParams> = z.object({
  as: identity,
  to: z.array(address).min(1).max(64),
  body: z.string().max(1 << 20), // the bus refuses past its own, smaller limit with the exact size
  thread: z.string().max(200).optional(),
  replyTo: messageId.optional(),
  requiresAck: z.boolean().optional(),
  slaSeconds: z.number().int().min(1).max(7 * 86400).optional(),
  idempotencyKey: z.string().min(1).max(200).optional(),
  insist: z.boolean().optional(),
}).strict();

export const inboxParams: z.ZodType<InboxParams> = z.object({
  identity,
  unreadOnly: z.boolean().optional(),
  limit: z.number().int().min(1).max(200).optional(),
}).strict();

export const messageParams: z.ZodType<MessageParams> = z.object({ id: messageId }).strict();

export const receiptParams: z.ZodType<ReceiptParams> = z.object({
  as: identity,
  id: messageId,
  kind: z.enum(['read', 'ack', 'result']),
  outcome: z.enum(['done', 'stuck', 'rejected']).optional(),
  summary: z.string().min(1).max(8192).optional(),
}).strict().refine((p) => (p.kind === 'result') === (p.outcome !== undefined), { message: 'a result needs an outcome (done, stuck or rejected); read and ack take none' });

export const actionParams: z.ZodType<ActionParams> = z.object({
  id: messageId,
  by: identity,
  note: z.string().max(2000).optional(),
}).strict();

/** The params, or a message naming each bad field. */
export function checkParams<T>(schema: z.ZodType<T>, method: string, params: unknown): T | string {
  const r = schema.safeParse(params);
  if (r.success) return r.data;
  return `${method}: ${r.error.issues.map((i) => `${i.path.join('.') || 'params'} ${i.message}`).join('; ')}`;
}

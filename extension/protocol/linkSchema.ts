// What a linked hub answers to link/peers, checked before anything of it is kept or shown: its
// names become identities here (`bob@frontend`) and rows in the view, so they are names, not text.
import { z } from 'zod';
import type { LinkedPeer } from './link';

/** A name of its own repository: no `@` (it cannot speak for a third one). */
const LOCAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** As many identities as a hub lists; more is not a repository's roster. */
export const MAX_LINKED_PEERS = 1000;

export const linkedPeersSchema: z.ZodType<LinkedPeer[]> = z
  .array(
    z.object({
      name: z.string().regex(LOCAL_NAME, 'must be a name of its own repository'),
      roles: z.array(z.string().regex(LOCAL_NAME, 'must be a role name')).max(32),
      live_sessions: z.number().int().min(0).max(100_000),
    }),
  )
  .max(MAX_LINKED_PEERS);

// What crosses between two hubs on one machine that the user linked (hub/link/): the hello a hub
// writes on the other's socket, the requests it then makes, and how a link looks in the views.
// A hub speaks on the other's socket as its repository (`name`), proven by its node key.
import type { SecretProof } from './helloVersion';

/** A repository's short name: how its identities are qualified on the other side (`bob@frontend`). */
export const REPO_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The linking hub's side of the handshake: who it is, and a nonce the other hub signs. */
export interface LinkHello extends SecretProof {
  handoff: 1;
  kind: 'link';
  link: {
    /** The linking repository's short name. */
    repo: string;
    /** Its root folder (the hub's workspace): what the other side's agreement names. */
    root: string;
    /** Its hub's node key, base64 SPKI DER. */
    key: string;
    nonce: string;
  };
}

/** The answering hub's side, in its hello reply: its name and key, and its signature over the linker's nonce. */
export interface LinkHelloReply {
  repo: string;
  root: string;
  key: string;
  nonce: string;
  sig: string;
}

/** What each side signs: the other's nonce, both roots, the direction (so a signature cannot be replayed the other way). */
export function linkProofText(nonce: string, signerRoot: string, otherRoot: string): string {
  return `handoff link proof\n${nonce}\n${signerRoot}\n${otherRoot}`;
}

/** The linker's signature over the answerer's nonce: before it, nothing else is served. */
export const LINK_PROVE = 'link/prove';
/** Outbox entries, each the wire object of a handoff or a receipt (as over Matrix) — answered once the other hub has committed them. */
export const LINK_DELIVER = 'link/deliver';
/** The answering hub's identities and how many live sessions each has. */
export const LINK_PEERS = 'link/peers';
/** From the answering hub, unasked: its identities changed (ask link/peers again). */
export const LINK_ROSTER_CHANGED = 'link/rosterChanged';

export interface LinkProveParams {
  sig: string;
}
export interface LinkDeliverParams {
  /** `{message}` or `{receipt}`, as in a Matrix batch (matrix/wire.ts), signed by the sender's node key. */
  items: unknown[];
}
/** Per item, in order: `taken` once this hub's store holds it (new, or already there), or why it is refused (never retried). */
export interface LinkDeliverAnswer {
  results: ('taken' | { refused: string })[];
}
export interface LinkedPeer {
  name: string;
  roles: string[];
  live_sessions: number;
}

/** A repository linked to this one, as `handoff status` and the view show it. */
export interface LinkView {
  /** Its short name (`bob@<name>`); absent until its hub first answered. */
  name?: string;
  root: string;
  /**
   * linked: both sides agreed and the other hub answers; waiting: linked here, not there (yet);
   * down: agreed, but its hub is not running (what is sent waits in the outbox); refused: its hub
   * answered with another key, or refused us (`error`); unlinked: the user removed it (its
   * outbox entries wait, undelivered, until it is linked again).
   */
  state: 'linked' | 'waiting' | 'down' | 'refused' | 'unlinked';
  error?: string;
  /** Its hub's node key (base64 SPKI DER), recorded at the first agreed contact. */
  key?: string;
  linkedAt: number;
  /** Outbox entries for it not yet in its hub. */
  outbox: number;
  /** Its identities as it last said, with their live sessions (empty while it is not linked). */
  peers: LinkedPeer[];
}

/** This repository on the machine: its short name and its links. */
export interface LinksView {
  name: string;
  links: LinkView[];
}

// What the hub needs from a transport to other nodes (the Matrix link), and what it reports about
// it. Types only: the hub never loads a transport's code unless one is configured.

/** Where a handoff to remote recipients is: the send reply says it honestly. */
export type RelayOutcome =
  | { state: 'on_homeserver'; event_id: string; at: number }
  | { state: 'in_outbox'; note: string; last_error?: string }
  | { state: 'refused'; reason: string };

/** An advisory `m.read` receipt: a Matrix *user* read up to this message (not a session's ACK). */
export interface AdvisoryRead {
  user: string;
  at: number;
}

export interface RemoteStatus {
  transport: 'matrix';
  /** connecting: first contact; connected: syncing; retrying: the homeserver is unreachable;
   * refused: the homeserver refused the token or the room (the error says which). */
  state: 'connecting' | 'connected' | 'retrying' | 'refused' | 'stopped';
  homeserver: string;
  userId?: string;
  room?: string;
  error?: string;
  /** Outbox entries not yet accepted by the homeserver. */
  outbox: number;
  lastSyncAt?: number;
  /** By message id. m.read receipts are per Matrix user, not per session: advisory only. */
  advisoryReads: Record<string, AdvisoryRead[]>;
  /** Says the above in words, for the panel to show next to them. */
  advisoryReadsNote: string;
  /** Which Matrix account speaks for which node (G9): configured, this hub, or first announcement. */
  nodes?: { node: string; user: string; how: 'configured' | 'this hub' | 'announced'; signed: boolean }[];
  /** Room events not taken, by why (not allowed, forged node, refused node claim, malformed, …), since the link started. */
  dropped?: Record<string, number>;
  /** For the panel, in words: refused node claims, and accounts that speak for several nodes. */
  notices?: string[];
}

export interface RemoteLink {
  /** Waits up to `waitMs` for the message's outbox entry to reach the homeserver. */
  whereIs(messageId: string, waitMs: number): Promise<RelayOutcome>;
  status(): RemoteStatus;
  close(): Promise<void>;
}

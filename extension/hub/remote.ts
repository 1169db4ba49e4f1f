// What the hub needs from a transport to other nodes (the Matrix link), and what it reports about
// it. Types only (what it reports is protocol/views.ts): the hub never loads a transport's code unless one is configured.
import type { RelayOutcome, LinkStatus } from '../protocol/views';

export interface RemoteLink {
  /** Waits up to `waitMs` for the message's outbox entry to reach the homeserver. */
  whereIs(messageId: string, waitMs: number): Promise<RelayOutcome>;
  status(): LinkStatus;
  close(): Promise<void>;
}

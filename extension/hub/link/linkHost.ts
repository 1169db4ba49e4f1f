// What a link to another repository needs of the hub it runs in: its state, its clock and where
// it lives, to apply what the other hub delivered, and to say that something changed. Types only,
// so the link's files and hub.ts (which makes the link) do not import each other.
import type { BusEvent, BusState } from '../bus/model';

export interface LinkHost {
  readonly options: { readonly workspace: string; readonly storeDir: string };
  readonly state: BusState;
  readonly now: () => number;
  readonly sessions: { count(identity: string): number };
  /** Commits events the other hub delivered (handoffs, receipts, relay records) through the journal. */
  applyRemote(events: BusEvent[]): Promise<void>;
  knows(id: string): boolean;
  linkChanged(): void;
  onChanged(listener: (ids: readonly string[]) => void): () => void;
}

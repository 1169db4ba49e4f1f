// Every refusal names what was wrong and what to do about it (G4: no silent success).

export type BusErrorCode =
  | 'unknown_identity'
  | 'ambiguous_identity'
  | 'invalid_identity'
  | 'no_identity'
  | 'invalid_message_id'
  | 'unknown_message'
  | 'removed_by_retention'
  | 'not_addressed_to_you'
  | 'not_your_message'
  | 'not_your_channel'
  | 'payload_too_large'
  | 'invalid_input'
  | 'store_unavailable'
  | 'shutting_down'
  | 'already_settled';

export class BusError extends Error {
  constructor(
    readonly code: BusErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

// What one turn of an agent is handed at once, in bytes (#44.3): a flood of 10 000 handoffs to one
// agent reaches its model a budget at a time, the oldest first, with a count of the rest and how to
// page on. Nothing is dropped: the store keeps every handoff, and inbox pages through them all.

/** The pushes replayed when a session (re)attaches, with the notice of how many more wait. */
export const REPLAY_BYTES = 128 * 1024;
/** The context one hook answer hands the model (its additionalContext or Stop reason). */
export const HOOK_BYTES = 16 * 1024;
/** The unacked footer on every tool result. */
export const FOOTER_BYTES = 256;
/** One inbox result as its client receives it (text and structuredContent, JSON-encoded). */
export const INBOX_PAGE_BYTES = 512 * 1024;

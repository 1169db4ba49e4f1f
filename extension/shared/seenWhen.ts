// When a recipient's model will see a handoff: part of a send's answer, read by the MCP tools, the
// CLI and the editor alike.

/** When a recipient's model will see a handoff sent now, as far as this hub can tell. */
export type SeenWhen = 'now' | 'next_tool_call' | 'next_turn' | 'when_it_calls_inbox';

/** The same, as a sender reads it. */
export const SEEN_TEXT: Record<SeenWhen | 'on_another_node', string> = {
  now: 'its idle session is woken with it now',
  next_tool_call: 'its model sees it after its current tool call',
  next_turn: 'its model sees it at its next turn',
  when_it_calls_inbox: 'its model sees it only when it calls inbox (no Handoff hooks heard from it)',
  on_another_node: 'its own hub tells when it is seen',
};

// What an agent may read: the one rule every reader applies (get_message, get_receipts, inbox,
// search_history, export --as, the footer). Its sender and its recipients, nobody else. A
// handoff to `role:NAME` names its recipients when it is sent (the role's holders then), so a role
// claimed later (roles are the agent's own word: --role, HANDOFF_ROLES, whoami) opens nothing
// that was addressed to the role before the claim.
import type { Message } from './model';

export function mayRead(m: Pick<Message, 'from' | 'recipients'>, identity: string): boolean {
  return m.from === identity || m.recipients.includes(identity);
}

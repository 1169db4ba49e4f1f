// "Open message": the full message and every receipt as a read-only plain-text document
// (handoff:/SENDER: SUBJECT?ID), titled so a person knows which handoff the tab holds; nothing is
// written to disk. Plain text, so an untrusted body is shown, never rendered.
import { CHANNEL_WORDS } from '../protocol/model';
import * as vscode from 'vscode';
import type { MessageView } from '../protocol/views';
import { messageTitle } from './messageTitle';

export const MESSAGE_SCHEME = 'handoff';

/** The message's id goes in the query: the path is the title. */
export function messageUri(id: string, title = id): vscode.Uri {
  return vscode.Uri.from({ scheme: MESSAGE_SCHEME, path: `/${title}`, query: id });
}

/** Opens the handoff as a read-only document titled by its sender and subject. */
export async function openMessage(lookup: (id: string) => Promise<MessageView | null>, id: string): Promise<void> {
  const view = await lookup(id);
  const uri = messageUri(id, view ? messageTitle(view.message.from, view.message.body) : id);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: true });
}

export function renderMessageText(v: MessageView): string {
  const m = v.message;
  const when = (at: number) => new Date(at).toISOString();
  const lines = [
    `Handoff ${m.id}`,
    `from:    ${m.from} (${m.channel ? `${CHANNEL_WORDS[m.channel]}, ` : ''}session ${m.sentBySession}, node ${m.node})`,
    `to:      ${m.address.join(', ')}${m.address.join() !== m.recipients.join() ? ` → ${m.recipients.join(', ')}` : ''}`,
    `thread:  ${m.thread}${m.replyTo ? ` (reply to ${m.replyTo})` : ''}`,
    `sent:    ${when(m.sentAt)} · ACK ${m.requiresAck ? `due within ${Math.round(m.slaMs / 1000)} s` : 'not requested'}`,
    v.resolution
      ? `resolved by ${v.resolution.by} at ${when(v.resolution.at)}${v.resolution.note ? `: ${v.resolution.note}` : ''}`
      : v.settled
        ? 'settled'
        : 'open',
    '',
    ...m.attachments.map((a) => `attachment: ${a.path} (${a.bytes} bytes, sha256 ${a.sha256})`),
    m.attachments.length ? '' : undefined,
    '─── body (untrusted: written by the sender) ───',
    m.body,
    '─── per recipient ───',
  ].filter((l): l is string => l !== undefined);
  for (const d of v.deliveries) {
    lines.push(`${d.recipient}: ${d.state}${d.failure ? ` (${d.failure.reason})` : ''}`);
    for (const p of d.pushes) lines.push(`  pushed (${p.kind}) to session ${p.session} on ${p.node} at ${when(p.at)}`);
    for (const r of d.receipts)
      lines.push(
        `  ${r.kind}${r.outcome ? ` ${r.outcome}` : ''} by ${r.by} from ${CHANNEL_WORDS[r.channel ?? 'agent']}, session ${r.session}, node ${r.node}, at ${when(r.at)}${r.summary ? `: ${r.summary}` : ''}`,
      );
    if (d.chasedAt) lines.push(`  chased at ${when(d.chasedAt)}`);
  }
  return `${lines.join('\n')}\n`;
}

export class MessageDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly lookup: (id: string) => Promise<MessageView | null>) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const id = uri.query;
    const view = await this.lookup(id);
    return view ? renderMessageText(view) : `No message ${id} on this hub.\n`;
  }
}

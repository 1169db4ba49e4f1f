// `handoff`: the headless face of the bus — run a hub, send, read an inbox, list peers, and
// `status` for scripts and CI (exits 1 when anything is past its SLA or dead-lettered).
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runHook } from '../hook/main';
import { AGENT_CLIS, connectAgent, disconnectAgent, type AgentCli } from '../shared/connect';
import { launcherDir, refreshLaunchers } from '../shared/connect/launchers';
import { connectedText } from '../shared/connect/text';
import { findWorkspace, workspaceOf } from '../shared/paths';
import { call, InboxRequest, SearchRequest, SendRequest, SnapshotRequest } from '../protocol/control';
import type { InboxItem, SearchHit, SearchQuery, SendResult, Snapshot } from '../protocol/views';
import { age } from '../shared/format';
import { deviceLines, encryptionLine } from '../shared/encryptionText';
import { recipientsText } from '../shared/sendText';
import { parseHubArgs, runHub } from '../hub/start/run';
import { exportCommand } from './exportCommand';
import { storeCommand } from './storeCommand';
import { emptyInboxText } from './inboxText';
import { connectHub } from './hubConnection';

const USAGE = `usage: handoff <command> [options]

  hub     --workspace DIR [--store DIR] [--socket PATH]   run the hub headless
          [--node NAME] [--matrix-config FILE]            …linked to other hubs over Matrix
  send    --to NAME[,NAME] [--as NAME] [--thread T] [--key K] [--insist] BODY…
  inbox   [--as NAME] [--unread]
  search  [WORDS…] [--from NAME] [--to NAME] [--thread T] [--state S] [--since ISO] [--until ISO]
          [--as NAME] [--limit N]   open and settled handoffs, newest first (--as: only what NAME may see)
  export  --since 30d|DATE [--until 30d|DATE] [--as NAME] [--open] [--out FILE]
          settled handoffs sent in that time as JSON lines, each with its receipts and state, in
          the order they settled (--open: then the open ones); to stdout, or a new FILE
  peers
  status                      exits 1 when a handoff is past its SLA or dead-lettered
  connect    claude|codex|gemini|vscode [--name NAME [--rename]] [--workspace DIR]
                              register the bridge and install the hooks that bring handoffs
                              into the agent's model context, once for the whole repository
                              (idempotent; says what it wrote); --name names the agent in this
                              checkout (a worktree's name follows its branch; --rename to change it)
  disconnect claude|codex|gemini|vscode [--workspace DIR]   remove exactly what connect added
  hook       CLI EVENT [--name NAME]                 what the installed hooks run (unnamed: the
                              agent's name in the checkout the session runs in)
  store check  [--store DIR | --workspace DIR]       list damage in the store's files (exits 1 if any)
  store repair [--store DIR | --workspace DIR] [--yes]
                              say what would be dropped; with --yes keep a copy of each damaged
                              file beside it, then drop only the damaged lines
  store retention [--days N] [--gib N] [--keep-all]
                              how much history this store keeps (default everything): whole
                              segments of settled handoffs go, oldest first, once settled more
                              than N days ago or while history is over N GiB; nothing open goes

common: --hub SOCKET (default: $HANDOFF_HUB, else the hub of the workspace of the cwd)
        --json  print machine-readable output
        --as defaults to $HANDOFF_AGENT, else your user name`;

async function connectCommand(command: 'connect' | 'disconnect', argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      rename: { type: 'boolean' },
      workspace: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const cli = positionals[0] as AgentCli;
  if (!AGENT_CLIS.includes(cli)) {
    process.stderr.write(`handoff ${command}: say which agent CLI: ${AGENT_CLIS.join(', ')}\n`);
    return 2;
  }
  const folder = values.workspace ? resolve(values.workspace) : process.cwd();
  const workspace = values.workspace ? workspaceOf(folder) : findWorkspace(folder);
  try {
    // Configs name the stable launchers (shared/connect/launchers.ts), pointed at this Node and
    // build now, and at the editor's by every activation: a removed npx cache does not break them.
    if (command === 'disconnect') {
      const changes = disconnectAgent(cli, { workspace, folder, name: values.name, launch: here() });
      if (values.json) process.stdout.write(`${JSON.stringify(changes.map(written), null, 2)}\n`);
      else if (changes.length === 0)
        process.stdout.write(`${cli}: nothing to change (not connected for ${workspace}).\n`);
      else for (const c of changes) process.stdout.write(`${c.path}: ${c.what}\n`);
      return 0;
    }
    // Run through the editor's `handoff` launcher this Node may be the desktop editor's Electron.
    const launch = refreshLaunchers(launcherDir(), process.execPath, __dirname, !!process.versions.electron);
    const done = await connectAgent(cli, { workspace, folder, name: values.name, rename: values.rename, launch });
    if (values.json) {
      const { changes, ...rest } = done;
      process.stdout.write(`${JSON.stringify({ ...rest, changes: changes.map(written) }, null, 2)}\n`);
      return 0;
    }
    if (done.changes.length === 0) process.stdout.write('Nothing to change: already connected so.\n');
    for (const c of done.changes) process.stdout.write(`${c.path}: ${c.what}\n`);
    process.stdout.write(`${connectedText(cli, done)}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`handoff ${command} ${cli}: ${(e as Error).message}\n`);
    return 1;
  }
}

const here = () => ({ node: process.execPath, dist: __dirname });
const written = (c: { path: string; what: string }) => ({ path: c.path, what: c.what });

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  // `handoff export --help` is a question, not an unknown option (a body after `--` is a body).
  const options = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (options.includes('--help') || options.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === 'hub') {
    await runHub(parseHubArgs(rest));
    return -1; // keeps running
  }
  if (command === 'hook') return runHook(rest);
  if (command === 'connect' || command === 'disconnect') return connectCommand(command, rest);
  if (command === 'store') return storeCommand(rest);
  if (command === 'export') return exportCommand(rest);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      hub: { type: 'string' },
      json: { type: 'boolean' },
      as: { type: 'string' },
      to: { type: 'string' },
      thread: { type: 'string' },
      key: { type: 'string' },
      insist: { type: 'boolean' },
      unread: { type: 'boolean' },
      body: { type: 'string' },
      from: { type: 'string' },
      state: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string' },
    },
  });
  const me = values.as ?? process.env.HANDOFF_AGENT ?? userInfo().username;
  const out = (data: unknown, text: string) =>
    process.stdout.write(values.json ? `${JSON.stringify(data, null, 2)}\n` : `${text}\n`);

  const client = await connectHub('handoff', values.hub);
  if (!client) return 2;
  const { connection } = client;
  try {
    switch (command) {
      case 'send': {
        const body = values.body ?? positionals.join(' ');
        if (!values.to || !body) throw new Error('send needs --to NAME and a body');
        const r: SendResult = await call(connection, SendRequest, {
          as: me,
          to: values.to.split(','),
          body,
          thread: values.thread,
          idempotencyKey: values.key,
          insist: values.insist,
        });
        out(
          r,
          r.duplicate
            ? `not sent again: ${r.duplicate.note} (${r.message_id})`
            : `stored ${r.message_id}: ${recipientsText(r)}. Not proof of reading — \`handoff status\` shows ACKs.`,
        );
        return 0;
      }
      case 'inbox': {
        const items: InboxItem[] = await call(connection, InboxRequest, {
          identity: me,
          unreadOnly: values.unread,
          limit: 200,
        });
        const known = items.length
          ? []
          : ((await call(connection, SnapshotRequest)) as Snapshot).coverage.map((c) => c.identity);
        out(
          items,
          items
            .map(
              (i) =>
                `${i.message.id} [${i.delivery.state}] from ${i.message.from}: ${i.message.body.replace(/\s+/g, ' ').slice(0, 100)}`,
            )
            .join('\n') || emptyInboxText(me, known),
        );
        return 0;
      }
      case 'search': {
        const when = (v?: string) => {
          if (v === undefined) return undefined;
          const t = Date.parse(v);
          if (Number.isNaN(t)) throw new Error(`"${v}" is not a time: give an ISO date such as 2026-05-01`);
          return t;
        };
        const hits: SearchHit[] = await call(connection, SearchRequest, {
          as: values.as,
          text: positionals.join(' ') || undefined,
          from: values.from,
          to: values.to,
          thread: values.thread,
          state: values.state as SearchQuery['state'], // checked by the hub against SEARCH_STATES
          since: when(values.since),
          until: when(values.until),
          limit: Number(values.limit ?? 20),
        });
        out(
          hits,
          hits
            .map(
              (h) =>
                `${h.message_id} ${new Date(h.sent_at).toISOString()} ${h.from} → ${h.recipients.join(', ')} [${h.settled ? 'settled' : 'open'}] ${h.excerpt.slice(0, 100)}`,
            )
            .join('\n') || 'no handoff answers that search',
        );
        return 0;
      }
      case 'peers': {
        const s: Snapshot = await call(connection, SnapshotRequest);
        out(
          s.coverage,
          s.coverage
            .map(
              (c) =>
                `${c.identity.padEnd(20)} ${String(c.liveSessions).padStart(2)} live  ${c.acked}/${c.addressed} acked${c.medianAckMs !== undefined ? `  median ack ${age(c.medianAckMs)}` : ''}${c.ghost ? `  GHOST (${c.unacked} unacked, nobody connected)` : ''}`,
            )
            .join('\n') || 'no identities yet',
        );
        return 0;
      }
      case 'status': {
        const s: Snapshot = await call(connection, SnapshotRequest);
        const late = s.pending.filter((e) => s.overdue.ids.includes(e.id));
        const lines = [
          `hub ${s.node} · ${s.sessions.length} live session(s) · ${s.pendingCount} pending · store ${s.store.ok ? 'ok' : `FAILING: ${s.store.error}`}`,
          ...(s.link
            ? [
                `  matrix ${s.link.state}${s.link.error ? ` (${s.link.error})` : ''} · ${s.link.userId ?? '?'} in ${s.link.room ?? '?'} · outbox ${s.link.outbox}`,
                `  ${encryptionLine(s.link)}`,
                ...deviceLines(s.link).map((d) => `    ${d}`),
              ]
            : []),
          ...(s.weaker ?? []).map((w) => `  weaker here: ${w}`),
          ...late.map(
            (e) =>
              `  OVERDUE ${e.id} ${e.from} → ${e.recipients.map((r) => `${r.recipient}:${r.state}${r.failure ? ` (${r.failure})` : ''}`).join(', ')} · sent ${age(s.now - e.sentAt)} ago · ${e.preview}`,
          ),
        ];
        if (s.overdue.count > late.length) lines.push(`  … and ${s.overdue.count - late.length} more overdue`);
        if (s.overdue.count === 0) lines.push('  every handoff is acknowledged or within its SLA');
        out({ ...s, messages: undefined }, lines.join('\n'));
        return s.overdue.count > 0 || !s.store.ok ? 1 : 0;
      }
      default:
        process.stderr.write(`handoff: unknown command "${command}"\n${USAGE}\n`);
        return 2;
    }
  } catch (e) {
    process.stderr.write(`handoff ${command}: ${(e as Error).message}\n`);
    return 1;
  } finally {
    client.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e) => {
    process.stderr.write(`handoff: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);

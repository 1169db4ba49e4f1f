// `handoff`: the headless face of the bus — run a hub, send, read an inbox, list peers, and
// `status` for scripts and CI (exits 1 when anything is past its SLA or dead-lettered).
import { join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { runHook } from '../hook/main';
import { AGENT_CLIS, connectAgent, disconnectAgent, type AgentCli } from '../shared/connect';
import { launcherDir, refreshLaunchers } from '../shared/connect/launchers';
import { connectedText } from '../shared/connect/text';
import { findWorkspace, workspaceOf } from '../shared/paths';
import { call, InboxRequest, LinksRequest, SearchRequest, SendRequest, SnapshotRequest } from '../protocol/control';
import { linkLines } from './linkText';
import type { InboxItem, SearchHit, SearchQuery, SendResult, Snapshot } from '../protocol/views';
import { age } from '../shared/format';
import { deviceLines, encryptionLine } from '../shared/encryptionText';
import { recipientsText } from '../shared/sendText';
import { parseHubArgs, runHub } from '../hub/start/run';
import { exportCommand, pointInTime } from './exportCommand';
import { parseSearch } from '../shared/searchQuery';
import { osPersonName } from '../shared/personName';
import { storeCommand } from './storeCommand';
import { emptyInboxText } from './inboxText';
import { connectHub } from './hubConnection';
import { closest, readFlags, UsageError } from './arguments';

const USAGE = `usage: handoff <command> [options]

  hub     --workspace DIR [--store DIR] [--socket PATH]   run the hub headless
          [--node NAME] [--matrix-config FILE]            …linked to other hubs over Matrix
  send    --to NAME[,NAME] [--as NAME] [--thread T] [--key K] [--insist] BODY…
  inbox   [--as NAME] [--unread]
  search  [WORDS…] [from:NAME] [to:NAME] [thread:T] [state:S]   as in the editor's search box
          [--since 30d|DATE] [--until 30d|DATE] [--as NAME] [--limit N]   (--from, --to, --thread,
          --state too) open and settled handoffs, newest first (--as: only what NAME may see);
          a word finds its forms (quote: quotes, quoted), word* any word it begins
  export  --since 30d|DATE [--until 30d|DATE] [--as NAME] [--open] [--out FILE]
          settled handoffs sent in that time as JSON lines, each with its receipts and state, in
          the order they settled (--open: then the open ones); to stdout, or a new FILE
  peers
  link       [PATH] [--name NAME]   link this repository to the one at PATH on this machine (run it
                              in both: nothing flows until both agree); its agents are then NAME@REPO;
                              --name sets this repository's short name (before its first link)
  unlink     PATH             stop the link (what waits for it stays in the outbox)
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
        --as defaults to $HANDOFF_AGENT, else your user name
handoff --version             the version of this handoff
exit codes: 0 done · 1 it ran and failed, or found something (damage, overdue) · 2 not run: a
            mistake in the command, or no hub to ask (the message says which and what to do)`;

async function connectCommand(command: 'connect' | 'disconnect', argv: string[]): Promise<number> {
  const { values, positionals } = readFlags(
    `handoff ${command}`,
    argv,
    { name: { type: 'string' }, rename: { type: 'boolean' }, workspace: { type: 'string' }, json: { type: 'boolean' } },
    true,
  );
  const cli = positionals[0] as AgentCli;
  if (!AGENT_CLIS.includes(cli)) {
    const meant = positionals[0] ? closest(positionals[0], AGENT_CLIS) : undefined;
    throw new UsageError(
      `handoff ${command}: say which agent CLI${positionals[0] ? ` ("${positionals[0]}" is none${meant ? ` — did you mean ${meant}?` : ''})` : ''}: ${AGENT_CLIS.join(', ')}.`,
    );
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

/** The flags each bus command takes (`handoff peers --as x` is a mistake, not a filter). */
const BUS = { hub: { type: 'string' }, json: { type: 'boolean' } } as const;
const WHO = { as: { type: 'string' } } as const;
const COMMAND_FLAGS = {
  send: {
    ...BUS,
    ...WHO,
    to: { type: 'string' },
    thread: { type: 'string' },
    key: { type: 'string' },
    insist: { type: 'boolean' },
    body: { type: 'string' },
  },
  inbox: { ...BUS, ...WHO, unread: { type: 'boolean' } },
  search: {
    ...BUS,
    ...WHO,
    from: { type: 'string' },
    to: { type: 'string' },
    thread: { type: 'string' },
    state: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
  },
  peers: BUS,
  status: BUS,
  link: { ...BUS, name: { type: 'string' } },
  unlink: BUS,
} as const;
type BusCommand = keyof typeof COMMAND_FLAGS;
const isBusCommand = (c: string): c is BusCommand => Object.hasOwn(COMMAND_FLAGS, c);
type BusFlags = Partial<
  Record<
    'hub' | 'as' | 'to' | 'thread' | 'key' | 'body' | 'from' | 'state' | 'since' | 'until' | 'limit' | 'name',
    string
  >
> &
  Partial<Record<'json' | 'insist' | 'unread', boolean>>;
const COMMANDS = [
  'hub',
  'send',
  'inbox',
  'search',
  'export',
  'peers',
  'status',
  'link',
  'unlink',
  'connect',
  'disconnect',
  'hook',
  'store',
];

/** The package's version, from the package.json beside dist/ (the checkout, the npm package, the .vsix). */
function version(): string {
  try {
    return (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** `handoff search`'s words (`thread:round1 parser`) and flags as one query, or a UsageError. */
function searchQuery(positionals: string[], values: BusFlags): SearchQuery {
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new UsageError(`handoff search: --limit ${values.limit} is not a count from 1 to 500`);
  const q = parseSearch(positionals.join(' '), limit, {
    from: values.from,
    to: values.to,
    thread: values.thread,
    state: values.state,
  });
  if (typeof q === 'string') throw new UsageError(`handoff search: ${q}.`);
  const when = (flag: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    try {
      return pointInTime(flag, v, Date.now());
    } catch (e) {
      throw new UsageError(`handoff search: ${(e as Error).message}.`);
    }
  };
  return { ...q, since: when('--since', values.since), until: when('--until', values.until) };
}

const here = () => ({ node: process.execPath, dist: __dirname });
const written = (c: { path: string; what: string }) => ({ path: c.path, what: c.what });

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`handoff ${version()} (Node ${process.version})\n`);
    return 0;
  }
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
  if (!isBusCommand(command)) {
    const meant = closest(command, COMMANDS);
    throw new UsageError(
      `"${command}" is not a command${meant ? ` — did you mean \`handoff ${meant}\`?` : '.'} The commands: ${COMMANDS.join(', ')}; \`handoff --help\` says what each does.`,
    );
  }
  const read = readFlags(
    `handoff ${command}`,
    rest,
    COMMAND_FLAGS[command],
    command === 'send' || command === 'search' || command === 'link' || command === 'unlink',
  );
  const values = read.values as BusFlags;
  const { positionals } = read;
  // No name given: you, the person, named as the editor names you (shared/personName.ts).
  const asYou = values.as === undefined && process.env.HANDOFF_AGENT === undefined;
  const me = values.as ?? process.env.HANDOFF_AGENT ?? osPersonName();
  const out = (data: unknown, text: string) =>
    process.stdout.write(values.json ? `${JSON.stringify(data, null, 2)}\n` : `${text}\n`);

  if (command === 'send' && (!values.to || !(values.body ?? positionals.join(' '))))
    throw new UsageError('handoff send needs --to NAME and a body, as in: handoff send --to bob "please review #12"');
  // The words and filters read as the editor's box reads them; mistakes said before any hub is asked.
  const search = command === 'search' ? searchQuery(positionals, values) : undefined;
  const client = await connectHub('handoff', values.hub);
  if (!client) return 2;
  const { connection } = client;
  try {
    switch (command) {
      case 'send': {
        const body = values.body ?? positionals.join(' ');
        const r: SendResult = await call(connection, SendRequest, {
          as: me,
          to: (values.to ?? '').split(','),
          body,
          thread: values.thread,
          idempotencyKey: values.key,
          insist: values.insist,
          ...(asYou ? { asPerson: true } : {}),
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
        const hits: SearchHit[] = await call(connection, SearchRequest, { ...search!, as: values.as });
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
      case 'link':
      case 'unlink': {
        const [path] = positionals;
        if (command === 'unlink' && !path) throw new Error('unlink needs the PATH of the linked repository');
        if (!path && values.name === undefined)
          throw new Error('link needs the PATH of the other repository (or --name NAME)');
        const where = path ? resolve(path) : undefined;
        const v = await call(connection, LinksRequest, {
          ...(values.name !== undefined ? { name: values.name } : {}),
          ...(where ? (command === 'link' ? { link: where } : { unlink: where }) : {}),
        });
        out(v, [`this repository is ${v.name} on this machine`, ...linkLines(v)].join('\n'));
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
          ...(s.links?.links.length ? [`  repository ${s.links.name}`, ...linkLines(s.links)] : []),
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
    }
  } catch (e) {
    if (e instanceof UsageError) throw e;
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
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    // Not a sentence of ours: a bug. The stack is for the report, on request.
    const stack = process.env.HANDOFF_DEBUG ? `\n${(e as Error).stack}` : ' (HANDOFF_DEBUG=1 shows where)';
    process.stderr.write(`handoff: ${(e as Error).message ?? e}${stack}\n`);
    process.exit(1);
  },
);

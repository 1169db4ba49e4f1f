// The hub's socket: one per workspace, in a user-private directory. Each connection starts with a
// hello line (protocol/hello.ts) that says whether it is an agent (MCP) or a control client.
import { existsSync, unlinkSync, chmodSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { greet, NotAHub } from '../../shared/greet';
import { dirname } from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { ensurePrivateDir } from '../../shared/paths';
import { MAX_HELLO_BYTES, type Hello, type HelloReply } from '../../protocol/hello';
import { HELLO_VERSION } from '../../protocol/helloVersion';
import { readHello } from '../../protocol/helloSchema';
import { LineBuffer } from '../../shared/lines';
import { serveControl } from './control';
import type { Hub } from '../hub';
import { serveHook } from './hookService';
import { serveLink } from './linkService';
import type { LinkHelloReply } from '../../protocol/link';
import { canProve, challenge } from './processProof';
import type { BusError } from '../bus/errors';
import { serveAgent } from './mcp/agentConnection';
import { takeProcessLock } from '../../shared/processLock';
import type { Log } from '../../protocol/hubLog';
import type { EditorKeyCheck } from './editorKey';
import { powers } from '../../shared/platform/powers';
import { checkHello, newSecret, removeSecret, secretFile, writeSecret } from '../../shared/hubSecret';

export class HubAlreadyRunning extends Error {
  constructor(running: HelloReply | { stalledPid: number | '?' }, path: string) {
    super(
      'stalledPid' in running
        ? `A Handoff hub (pid ${running.stalledPid}) owns ${path} but does not answer right now (stopped or overloaded). Not taking its socket over: it may still be writing acknowledged handoffs. Wait for it, or stop it first.`
        : !running.ok
          ? `Something already listens on ${path} and does not answer as a Handoff hub (${running.error}). Stop it, or remove the file if nothing should be there.`
          : `A Handoff hub is already running for ${running.workspace ?? 'this workspace'} (pid ${running.pid ?? '?'}, node ${running.node ?? '?'}) on ${path}. Use it, or stop it first.`,
    );
  }
}

/** Asks whatever listens on `path` who it is; undefined if nothing answers (a stale socket). */
async function probeHub(path: string): Promise<HelloReply | undefined> {
  try {
    const { socket, reply } = await greet(path, { handoff: HELLO_VERSION, kind: 'control', client: 'probe' }, 1500);
    socket.destroy();
    return reply;
  } catch (e) {
    if (e instanceof NotAHub) return { handoff: HELLO_VERSION, ok: false, error: e.message };
    return undefined; // ENOENT, ECONNREFUSED: nobody home
  }
}

export interface ListenOptions {
  heartbeatMs: number;
  log: Log;
  /** From hello to `initialized`, or the agent connection is closed (default 10 s). */
  handshakeMs?: number;
  /** Whether a control hello's key is this hub's editor key (absent: no socket connection is `editor`). */
  isEditorKey?: EditorKeyCheck;
  /** Started by `handoff hub`, not by an editor window: said in the hello, so a window does not speak of another window. */
  headless?: boolean;
}

/**
 * Listens on the workspace socket. A hub that holds the workspace's lock, even a stalled one, is
 * an error naming it; a socket file left by a crashed hub (whose lock died with it) is replaced.
 */
export async function listen(hub: Hub, path: string, options: ListenOptions): Promise<Server> {
  if (powers.socketFiles) {
    ensurePrivateDir(dirname(path));
    // The lock decides; the probe only names a live owner in the refusal.
    const lock = await takeProcessLock(path);
    if (!lock.owned)
      throw new HubAlreadyRunning((await probeHub(path)) ?? { stalledPid: lock.holder?.pid ?? '?' }, path);
    process.on('exit', lock.release);
  }
  const running = existsSync(path) || !powers.socketFiles ? await probeHub(path) : undefined;
  if (running) {
    throw new HubAlreadyRunning(running, path);
  }
  if (powers.socketFiles && existsSync(path)) {
    options.log(`removing stale socket ${path} (nothing answered on it)`);
    unlinkSync(path);
  }
  // Where file modes do not keep other users off the socket (a named pipe), every hello proves the
  // secret only this user can read (shared/hubSecret.ts). Made now, written once the bind is ours.
  const secret = powers.socketModes ? undefined : { value: newSecret(), file: secretFile(path) };
  if (!secret) removeSecret(path);
  // Where hooks and bridges are challenged to prove their process: the hub's own private directory
  // beside its socket.
  let proofDir: string | undefined;
  if (canProve) {
    const dir = (proofDir = `${path}.proof`);
    ensurePrivateDir(dir);
    // Each challenge file is deleted once answered; the directory goes with the hub.
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  const server = createServer((socket) => {
    socket.pause();
    void hub.started.then(() => {
      accept(hub, socket, options, proofDir, secret);
      socket.resume();
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    // Another hub won a race for the same path between our probe and our listen.
    const winner = (e as NodeJS.ErrnoException).code === 'EADDRINUSE' ? await probeHub(path) : undefined;
    if (winner) throw new HubAlreadyRunning(winner, path);
    throw e;
  }
  if (powers.socketFiles) chmodSync(path, 0o600);
  if (secret) process.on('exit', writeSecret(path, secret.value));
  return server;
}

/** An editor window of this hub if it holds the editor key; any other control connection is the CLI's. */
function controlChannel(key: string | undefined, options: ListenOptions): 'editor' | 'cli' {
  if (key === undefined) return 'cli';
  if (options.isEditorKey?.(key)) return 'editor';
  options.log("a control connection presented a key that is not this hub's editor key: serving it as cli", 'warn');
  return 'cli';
}

function accept(
  hub: Hub,
  socket: Socket,
  options: ListenOptions,
  proofDir?: string,
  secret?: { value: string; file: string },
): void {
  const head = new LineBuffer(MAX_HELLO_BYTES);
  const reply = (r: Omit<HelloReply, 'handoff'>) =>
    socket.write(`${JSON.stringify({ handoff: HELLO_VERSION, ...r })}\n`);
  // A connection that never says what it is holds a slot forever: it gets a few seconds.
  const helloTimer = setTimeout(() => {
    reply({ ok: false, error: 'no hello line within 10 s' });
    socket.destroy();
  }, 10_000);
  helloTimer.unref();
  const onData = (chunk: Buffer) => {
    const first = head.firstLine(chunk);
    if (!first) {
      if (head.overLimit) {
        reply({ ok: false, error: 'no hello line: connect with the handoff-mcp bridge or the handoff CLI' });
        socket.destroy();
      }
      return;
    }
    socket.off('data', onData);
    clearTimeout(helloTimer);
    socket.pause();
    const rest = first.rest;
    let hello: Hello;
    try {
      const read = readHello(JSON.parse(first.line));
      if (typeof read === 'string') throw new Error(read);
      hello = read;
    } catch (e) {
      reply({ ok: false, error: `bad hello: ${(e as Error).message}` });
      socket.destroy();
      return;
    }
    const known = secret ? checkHello(secret.value, hello) : undefined;
    if (known && !known.ok) {
      options.log(`refused a ${hello.kind} connection that does not know this hub's secret`, 'warn');
      reply({
        ok: false,
        error: `this hub serves only its own user: a client proves it can read ${secret!.file} in its hello (Handoff's bridge, hook, CLI and editor do). Nothing was done.`,
      });
      socket.destroy();
      return;
    }
    const channel = hello.kind === 'control' ? controlChannel(hello.editorKey, options) : undefined;
    // A bridge that can prove its process is challenged in the reply itself (processProof.ts).
    let proof: ReturnType<typeof challenge> | undefined;
    if (hello.kind === 'mcp' && hello.proves && proofDir) {
      try {
        proof = challenge(proofDir, 'bridge');
      } catch (e) {
        // A full or read-only runtime folder refuses this bridge, which retries; the hub serves on.
        const why = `the hub cannot create its process challenge in ${proofDir}: ${(e as Error).message}`;
        options.log(`bridge for ${hello.identity ?? '(no name yet)'} refused: ${why}`, 'error');
        reply({ ok: false, error: why });
        socket.destroy();
        return;
      }
    }
    // Another repository's hub: only one the user linked here too gets past its hello.
    let linked: { reply: LinkHelloReply; nonce: string } | undefined;
    if (hello.kind === 'link') {
      const a = hub.links.answer(hello.link);
      if ('error' in a) {
        options.log(`refused a link from ${hello.link.root.slice(0, 300)}: ${a.error}`);
        reply({ ok: false, error: a.error });
        socket.destroy();
        return;
      }
      linked = a;
    }
    reply({
      ok: true,
      node: hub.node,
      workspace: hub.options.workspace,
      pid: process.pid,
      channel,
      ...(options.headless ? { headless: true } : {}),
      challenge: proof?.path,
      hubProof: known?.hubProof,
      ...(linked ? { link: linked.reply } : {}),
    });
    if (hello.kind === 'mcp') {
      const serve = (leftover: Buffer, ancestry?: number[] | BusError) => {
        serveAgent(hub, socket, hello, leftover, {
          heartbeatMs: options.heartbeatMs,
          handshakeMs: options.handshakeMs ?? 10_000,
          ancestry,
        });
        socket.resume();
      };
      if (!proof) return serve(rest);
      if (rest.length) socket.unshift(rest);
      proof
        .answer(socket)
        .then((p) => {
          if ('refused' in p) {
            // Served all the same, so its client hears why on every tool instead of a bridge that retries.
            options.log(`bridge for ${hello.identity ?? '(no name yet)'}: ${p.refused.message}`, 'warn');
            serve(p.rest, p.refused);
          } else serve(p.rest, p.ancestors);
        })
        // An unhandled rejection would end the hub: a bad connection closes only itself.
        .catch((e: unknown) => {
          options.log(`bridge for ${hello.identity ?? '(no name yet)'} closed: ${(e as Error).message}`, 'error');
          socket.destroy();
        });
    } else if (hello.kind === 'control') {
      if (rest.length) socket.unshift(rest);
      const connection = createMessageConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
      const stop = serveControl(hub, connection, channel ?? 'cli');
      connection.onClose(stop);
      connection.listen();
      socket.on('close', () => connection.dispose());
      socket.resume();
    } else if (hello.kind === 'hook') {
      serveHook(hub, socket, hello, options.log, proofDir);
    } else if (hello.kind === 'link' && linked) {
      serveLink(hub, socket, hello, linked.nonce, rest, options.log);
    } else {
      socket.destroy();
    }
  };
  socket.on('data', onData);
  socket.once('close', () => clearTimeout(helloTimer));
  socket.on('error', (e) => options.log(`socket error: ${e.message}`, 'warn'));
}

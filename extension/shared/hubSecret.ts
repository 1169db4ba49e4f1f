// A hub's secret, where file modes do not keep other users off its socket (a Windows named pipe:
// its default DACL lets any user open it for reading, and Node has no ACL API). The hub writes a
// random secret to a file only its user can read (powers.socketModes, platform/ipcPath.ts
// hubSecretPath); every client proves it knows it in its hello, and the hub proves it back in its
// reply, so a client never talks to a pipe another user made first, nor hands it the secret: both
// proofs are HMACs of the client's fresh nonce, never the secret itself (docs/threat-model.md).
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { hubSecretPath } from './platform/ipcPath';
import { powers } from './platform/powers';

const SECRET = /^[0-9a-f]{64}$/;

/**
 * The file holding the secret of the hub at `ipc`. A pipe's is under the profile itself, not
 * $XDG_STATE_HOME: an agent CLI may start its bridge and hooks with another environment.
 */
export function secretFile(ipc: string): string {
  return hubSecretPath(ipc, join(homedir(), '.local', 'state'));
}

// node:crypto is loaded only where a secret is in use: a third of a hook's start elsewhere.
const crypto = () => process.getBuiltinModule('node:crypto');

const mac = (secret: string, who: 'client' | 'hub', nonce: string) =>
  crypto().createHmac('sha256', secret).update(`handoff-${who}:${nonce}`).digest('hex');

/** The secret of the hub at `ipc`, if it keeps one. */
export function readSecret(ipc: string): string | undefined {
  try {
    const text = readFileSync(secretFile(ipc), 'utf8').trim();
    return SECRET.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** A fresh secret, not yet written. */
export function newSecret(): string {
  return crypto().randomBytes(32).toString('hex');
}

/** Writes the hub's secret (0600, replaced whole); returns a remover for the hub's exit. */
export function writeSecret(ipc: string, secret: string): () => void {
  const path = secretFile(ipc);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${secret}\n`, { mode: 0o600 });
  renameSync(tmp, path);
  return () => {
    if (readSecret(ipc) === secret) rmSync(path, { force: true });
  };
}

/** A secret left by a hub that kept one (a crash, or a run with socket modes switched off). */
export function removeSecret(ipc: string): void {
  rmSync(secretFile(ipc), { force: true });
}

/**
 * What a client adds to its hello, and how it checks the reply, for the hub at `ipc`. Undefined
 * where the socket's modes do not guard it and no secret is there to read: then no hub of this
 * user is there — whatever holds the pipe made it first (the real hub then cannot bind, so it never
 * writes its secret) — and the client must not say anything to it, not even its hello.
 */
export function signHello(ipc: string):
  | {
      fields: { nonce?: string; proof?: string };
      hubKnows(reply: { hubProof?: unknown }): boolean;
    }
  | undefined {
  const secret = readSecret(ipc);
  if (!secret) return powers.socketModes ? { fields: {}, hubKnows: () => true } : undefined;
  const nonce = crypto().randomBytes(16).toString('hex');
  return {
    fields: { nonce, proof: mac(secret, 'client', nonce) },
    hubKnows: (reply) => reply.hubProof === mac(secret, 'hub', nonce),
  };
}

/** The hub's check of a hello: its proof of the secret, and the reply's proof back. */
export function checkHello(
  secret: string,
  hello: { nonce?: string; proof?: string },
): { ok: boolean; hubProof?: string } {
  if (typeof hello.nonce !== 'string' || typeof hello.proof !== 'string') return { ok: false };
  const want = Buffer.from(mac(secret, 'client', hello.nonce));
  const got = Buffer.from(hello.proof);
  const ok = got.length === want.length && crypto().timingSafeEqual(got, want);
  return ok ? { ok, hubProof: mac(secret, 'hub', hello.nonce) } : { ok };
}

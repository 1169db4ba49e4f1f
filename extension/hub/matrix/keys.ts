// A node's Ed25519 key (node:crypto): the hub signs the structured data of every handoff and
// receipt it puts in the room, and announces the public key in its node's state event. Hubs that
// share one Matrix account are told apart by it, so a receipt verifies end to end.
// The private key lives in the store folder (0600) and never leaves it.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface NodeKey {
  privateKey: KeyObject;
  /** Base64 of the SPKI DER encoding: what the announcement carries. */
  publicKey: string;
}

const FILE = 'matrix-node-key.pem';

export function loadNodeKey(storeDir: string): NodeKey {
  const path = join(storeDir, FILE);
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    try {
      writeFileSync(path, pem, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      pem = readFileSync(path, 'utf8'); // another start wrote it first
    }
  }
  const privateKey = createPrivateKey(pem);
  return {
    privateKey,
    publicKey: createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64'),
  };
}

/** JSON with object keys sorted at every level: the bytes a signature covers. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : x,
  );
}

/** The signature of a wire object (its `sig` field, if any, left out). Deterministic: a retry sends the same bytes. */
export function signWire(key: NodeKey, wire: object): string {
  const { sig: _sig, ...rest } = wire as Record<string, unknown>;
  return sign(null, Buffer.from(canonical(rest)), key.privateKey).toString('base64');
}

/** Node keys already parsed: a room has a handful, and parsing one cost as much as a verification. */
const parsedKeys = new Map<string, KeyObject>();

function publicKeyObject(publicKey: string): KeyObject {
  let key = parsedKeys.get(publicKey);
  if (!key) {
    key = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
    if (parsedKeys.size >= 1000) parsedKeys.clear();
    parsedKeys.set(publicKey, key);
  }
  return key;
}

/** Whether a wire object from the room carries a valid signature by `publicKey`. Never throws. */
export function verifyWire(publicKey: string, raw: unknown): boolean {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return false;
  const { sig, ...rest } = raw as Record<string, unknown>;
  if (typeof sig !== 'string' || sig.length > 200) return false;
  try {
    const key = publicKeyObject(publicKey);
    return verify(null, Buffer.from(canonical(rest)), key, Buffer.from(sig, 'base64'));
  } catch {
    return false;
  }
}

// What every hello line carries, whichever client writes it (agent, control, hook, another
// repository's hub): the protocol's version and the proof of the hub's secret. A file of its own,
// so the hellos of each kind (hello.ts, hook.ts, link.ts) import it and not each other.

export const HELLO_VERSION = 1;

/**
 * A client's proof that it knows its hub's secret, where the hub keeps one (shared/hubSecret.ts:
 * a Windows named pipe, which file modes do not make private): a fresh nonce and its HMAC.
 */
export interface SecretProof {
  nonce?: string;
  proof?: string;
}

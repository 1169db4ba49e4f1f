// Attachments travel by reference: a workspace path and the sha256 of its bytes at send time,
// so the recipient can tell whether the file changed since.
import { createHash } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { BusError } from './bus/errors';
import type { Attachment } from './bus/model';

export async function resolveAttachment(workspace: string, path: string, sha256?: string): Promise<Attachment> {
  const root = await realpath(workspace).catch(() => workspace);
  const abs = await realpath(resolve(root, path)).catch(() => undefined);
  if (!abs) throw new BusError('invalid_input', `Attachment ${path} does not exist in the workspace ${root}. Attach files by workspace-relative path.`);
  const rel = relative(root, abs);
  if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
    throw new BusError('invalid_input', `Attachment ${path} is outside the workspace ${root}; only workspace files can be attached.`);
  }
  const bytes = await readFile(abs).catch((e: Error) => {
    throw new BusError('invalid_input', `Attachment ${path} cannot be read (${e.message}).`);
  });
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (sha256 && sha256.toLowerCase() !== digest) {
    throw new BusError('invalid_input', `Attachment ${path} has sha256 ${digest}, not the ${sha256} given: the file changed. Re-read it and send again.`);
  }
  return { path: rel.split(sep).join('/'), sha256: digest, bytes: bytes.length };
}

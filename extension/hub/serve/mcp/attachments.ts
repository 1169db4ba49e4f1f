// Attachments travel by reference: a workspace path and the sha256 of its bytes at send time,
// so the recipient can tell whether the file changed since. Only regular files, size-capped and
// hashed as a stream: a FIFO would stall the hub, a huge file would fill its memory.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { BusError } from '../../bus/errors';
import type { Attachment } from '../../bus/model';

/** Large enough for any source file or log; an attachment is hashed, never copied. */
export const MAX_ATTACHMENT_BYTES = 256 * 1024 * 1024;

export async function resolveAttachment(workspace: string, path: string, sha256?: string): Promise<Attachment> {
  const root = await realpath(workspace).catch(() => workspace);
  const abs = await realpath(resolve(root, path)).catch(() => undefined);
  if (!abs)
    throw new BusError(
      'invalid_input',
      `Attachment ${path} does not exist in the workspace ${root}. Attach files by workspace-relative path.`,
    );
  const rel = relative(root, abs);
  if (rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
    throw new BusError(
      'invalid_input',
      `Attachment ${path} is outside the workspace ${root}; only workspace files can be attached.`,
    );
  }
  const st = await stat(abs);
  if (!st.isFile())
    throw new BusError('invalid_input', `Attachment ${path} is not a regular file; only files can be attached.`);
  if (st.size > MAX_ATTACHMENT_BYTES) {
    throw new BusError(
      'payload_too_large',
      `Attachment ${path} is ${st.size} bytes; the limit is ${MAX_ATTACHMENT_BYTES}. Attach a smaller file or name the path in the body.`,
    );
  }
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(abs)) hash.update(chunk as Buffer);
  } catch (e) {
    throw new BusError('invalid_input', `Attachment ${path} cannot be read (${(e as Error).message}).`);
  }
  const digest = hash.digest('hex');
  if (sha256 && sha256.toLowerCase() !== digest) {
    throw new BusError(
      'invalid_input',
      `Attachment ${path} has sha256 ${digest}, not the ${sha256} given: the file changed. Re-read it and send again.`,
    );
  }
  return { path: rel.split(sep).join('/'), sha256: digest, bytes: st.size };
}

// Attachments travel by reference: a workspace path and the sha256 of its bytes at send time,
// so the recipient can tell whether the file changed since. Only regular files, size-capped and
// hashed as a stream: a FIFO would stall the hub, a huge file would fill its memory. The file is
// opened once, and what is checked and hashed is that open file, not its name again (which could
// name a FIFO by then).
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
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
  // O_NONBLOCK: opening a FIFO does not wait for a writer.
  const file = await open(abs, constants.O_RDONLY | constants.O_NONBLOCK).catch((e: Error) => {
    throw new BusError('invalid_input', `Attachment ${path} cannot be read (${e.message}).`);
  });
  const hash = createHash('sha256');
  let size: number;
  try {
    const st = await file.stat();
    size = st.size;
    if (!st.isFile())
      throw new BusError('invalid_input', `Attachment ${path} is not a regular file; only files can be attached.`);
    if (size > MAX_ATTACHMENT_BYTES) {
      throw new BusError(
        'payload_too_large',
        `Attachment ${path} is ${size} bytes; the limit is ${MAX_ATTACHMENT_BYTES}. Attach a smaller file or name the path in the body.`,
      );
    }
    for await (const chunk of file.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
  } catch (e) {
    if (e instanceof BusError) throw e;
    throw new BusError('invalid_input', `Attachment ${path} cannot be read (${(e as Error).message}).`);
  } finally {
    await file.close();
  }
  const digest = hash.digest('hex');
  if (sha256 && sha256.toLowerCase() !== digest) {
    throw new BusError(
      'invalid_input',
      `Attachment ${path} has sha256 ${digest}, not the ${sha256} given: the file changed. Re-read it and send again.`,
    );
  }
  return { path: rel.split(sep).join('/'), sha256: digest, bytes: size };
}

// Which repositories on this machine the user linked to this one, and this repository's short
// name: one small file in the store folder (`links.json`), replaced durably on every change. A
// link carries the other hub's name and node key from its first agreed contact on: from then on
// only that key speaks for it. An unlinked repository keeps its record (marked `unlinked`): what
// waits in the outbox for it stays there, undelivered, and is not sent anywhere else.
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { REPO_NAME_PATTERN } from '../../protocol/link';
import { replaceDurably } from '../store/replaceDurably';
import { nodeFs, writeAll } from '../store/storeFs';

export interface Agreement {
  root: string;
  /** The other repository's short name and its hub's key, once its hub has answered. */
  name?: string;
  key?: string;
  linkedAt: number;
  unlinked?: boolean;
}

const FILE = 'links.json';
const MAX_LINKS = 64;

const file = z
  .object({
    name: z.string().regex(REPO_NAME_PATTERN),
    links: z
      .array(
        z
          .object({
            root: z.string().min(1).max(4096),
            name: z.string().regex(REPO_NAME_PATTERN).optional(),
            key: z.string().max(256).optional(),
            linkedAt: z.number(),
            unlinked: z.boolean().optional(),
          })
          .strict(),
      )
      .max(MAX_LINKS),
  })
  .strict();

/** The default short name: the folder's name, cut to what a qualifier may hold. */
export function defaultRepoName(workspace: string): string {
  const cleaned = basename(workspace)
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
  return cleaned || 'repo';
}

export class Agreements {
  name: string;
  private links: Agreement[] = [];
  private writing: Promise<void> = Promise.resolve();
  private readonly path: string;

  constructor(
    storeDir: string,
    workspace: string,
    private readonly log: (line: string) => void,
  ) {
    this.path = join(storeDir, FILE);
    this.name = defaultRepoName(workspace);
    let text: string | undefined;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return; // none yet: nothing linked
    }
    try {
      const read = file.parse(JSON.parse(text));
      this.name = read.name;
      this.links = read.links;
    } catch (e) {
      // Never guessed at: an unreadable agreement links nothing until the user links again.
      this.log(
        `${this.path} is unreadable (${(e as Error).message}): no repository is linked until it is linked again`,
      );
    }
  }

  all(): readonly Agreement[] {
    return this.links;
  }

  /** A link the user has not removed, by the other repository's root. */
  agreed(root: string): Agreement | undefined {
    return this.links.find((l) => l.root === root && !l.unlinked);
  }

  byName(name: string): Agreement | undefined {
    return this.links.find((l) => l.name === name);
  }

  /** The names outbox entries route by: every repository ever linked, removed or not. */
  names(): Set<string> {
    return new Set(this.links.flatMap((l) => (l.name ? [l.name] : [])));
  }

  async add(root: string, at: number): Promise<Agreement> {
    const known = this.links.find((l) => l.root === root);
    if (known) {
      known.unlinked = undefined;
    } else {
      if (this.links.length >= MAX_LINKS) throw new Error(`at most ${MAX_LINKS} repositories can be linked`);
      this.links.push({ root, linkedAt: at });
    }
    await this.save();
    return this.links.find((l) => l.root === root)!;
  }

  async remove(root: string): Promise<boolean> {
    const link = this.agreed(root);
    if (!link) return false;
    link.unlinked = true;
    await this.save();
    return true;
  }

  async rename(name: string): Promise<void> {
    this.name = name;
    await this.save();
  }

  /** The other hub's name and key at its first agreed contact: durable before the link is used. */
  async pin(root: string, name: string, key: string): Promise<void> {
    const link = this.agreed(root);
    if (!link || (link.name === name && link.key === key)) return;
    link.name = name;
    link.key = key;
    await this.save();
  }

  /** One write at a time, each of the whole file as it is when its turn comes. */
  private save(): Promise<void> {
    const next = this.writing.then(async () => {
      const bytes = Buffer.from(JSON.stringify({ name: this.name, links: this.links }, null, 1));
      await replaceDurably(nodeFs, this.path, async (f) => {
        await writeAll(f, bytes, 0);
        return bytes.length;
      });
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}

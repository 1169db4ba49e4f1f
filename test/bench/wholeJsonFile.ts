// The bus bench's naive baseline: a lowdb adapter that rewrites the whole JSON document, durably,
// on every write (what a store without a journal would do).
import type { Adapter } from 'lowdb';
import { replaceDurably } from '../../extension/hub/store/replaceDurably';
import { nodeFs, writeAll } from '../../extension/hub/store/storeFs';

export class WholeJsonFile<T> implements Adapter<T> {
  constructor(readonly path: string) {}

  async read(): Promise<T | null> {
    try {
      return JSON.parse((await nodeFs.readFile(this.path)).toString('utf8')) as T;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async write(data: T): Promise<void> {
    const text = Buffer.from(JSON.stringify(data));
    await replaceDurably(nodeFs, this.path, async (file) => (await writeAll(file, text, 0), text.length));
  }
}

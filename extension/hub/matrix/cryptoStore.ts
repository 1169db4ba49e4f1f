// The Rust crypto keeps its device (identity keys, Olm and Megolm sessions, trust) in IndexedDB,
// which Node does not have. It runs here on fake-indexeddb, in memory, and this file makes that
// durable: after every crypto operation the databases are written as one snapshot into the node's
// store folder (0600, replaced durably), and read back before the device is opened again. A crash
// leaves the last snapshot: at most what the last operation changed is lost, never the device.
import { serialize, deserialize } from 'node:v8';
import { readFile } from 'node:fs/promises';
import { IDBFactory } from 'fake-indexeddb';
import { replaceDurably } from '../store/replaceDurably';
import { nodeFs, writeAll } from '../store/storeFs';

interface StoreShape {
  name: string;
  keyPath: string | string[] | null;
  autoIncrement: boolean;
  indexes: { name: string; keyPath: string | string[]; unique: boolean; multiEntry: boolean }[];
  keys: IDBValidKey[];
  values: unknown[];
}

interface DatabaseShape {
  name: string;
  version: number;
  stores: StoreShape[];
}

const FORMAT = 1;

function names(list: DOMStringList): string[] {
  return Array.from({ length: list.length }, (_, i) => list.item(i)!);
}

function done<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

function openDb(factory: IDBFactory, name: string, version?: number, upgrade?: (db: IDBDatabase) => void) {
  return new Promise<IDBDatabase>((resolve, reject) => {
    const req = factory.open(name, version);
    req.onupgradeneeded = () => upgrade?.(req.result);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error(`cannot open ${name}`));
    req.onblocked = () => reject(new Error(`${name} is held open by an older version`));
  });
}

/** Every database of `factory` whose name starts with `prefix`, as plain data. */
export async function dumpDatabases(factory: IDBFactory, prefix: string): Promise<DatabaseShape[]> {
  const out: DatabaseShape[] = [];
  for (const info of await factory.databases()) {
    if (!info.name?.startsWith(prefix)) continue;
    const db = await openDb(factory, info.name);
    try {
      const stores: StoreShape[] = [];
      const storeNames = names(db.objectStoreNames);
      if (storeNames.length) {
        const tx = db.transaction(storeNames, 'readonly');
        for (const name of storeNames) {
          const s = tx.objectStore(name);
          stores.push({
            name,
            keyPath: s.keyPath,
            autoIncrement: s.autoIncrement,
            indexes: names(s.indexNames).map((i) => {
              const ix = s.index(i);
              return { name: i, keyPath: ix.keyPath, unique: ix.unique, multiEntry: ix.multiEntry };
            }),
            keys: await done(s.getAllKeys()),
            values: await done(s.getAll()),
          });
        }
      }
      out.push({ name: info.name, version: db.version, stores });
    } finally {
      db.close();
    }
  }
  return out;
}

/** Recreates the databases of a dump in `factory` (which must not hold them yet). */
export async function restoreDatabases(factory: IDBFactory, dbs: DatabaseShape[]): Promise<void> {
  for (const d of dbs) {
    const db = await openDb(factory, d.name, d.version, (up) => {
      for (const s of d.stores) {
        const store = up.createObjectStore(s.name, { keyPath: s.keyPath, autoIncrement: s.autoIncrement });
        for (const i of s.indexes) store.createIndex(i.name, i.keyPath, { unique: i.unique, multiEntry: i.multiEntry });
      }
    });
    try {
      if (d.stores.length) {
        const tx = db.transaction(
          d.stores.map((s) => s.name),
          'readwrite',
        );
        for (const s of d.stores) {
          const store = tx.objectStore(s.name);
          s.values.forEach((v, i) => (s.keyPath === null ? store.put(v, s.keys[i]) : store.put(v)));
        }
        await new Promise<void>((resolve, reject) => {
          tx.oncomplete = () => resolve();
          tx.onerror = () => reject(tx.error ?? new Error('restoring the crypto store failed'));
          tx.onabort = () => reject(tx.error ?? new Error('restoring the crypto store was aborted'));
        });
      }
    } finally {
      db.close();
    }
  }
}

/**
 * One device's crypto store: an in-memory IndexedDB kept on disk as `path`. `open` restores it;
 * `save` writes it when it changed since the last save (compared byte for byte).
 */
export class CryptoStore {
  readonly factory = new IDBFactory();
  private last?: Buffer;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly prefix: string,
  ) {}

  /** Reads the snapshot, if any. A snapshot that cannot be read is an error, not a new device. */
  async open(): Promise<'restored' | 'new'> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'new';
      throw e;
    }
    const snap = deserialize(bytes) as { format?: number; databases?: DatabaseShape[] };
    if (snap?.format !== FORMAT || !Array.isArray(snap.databases))
      throw new Error(`${this.path} is not a crypto store snapshot this version can read`);
    await restoreDatabases(this.factory, snap.databases);
    this.last = bytes;
    return 'restored';
  }

  /** Writes the store if it changed; saves run one after another, in call order. */
  save(): Promise<void> {
    const next = this.saving.then(async () => {
      const bytes = serialize({ format: FORMAT, databases: await dumpDatabases(this.factory, this.prefix) });
      if (this.last?.equals(bytes)) return;
      await replaceDurably(nodeFs, this.path, async (file) => {
        await writeAll(file, bytes, 0);
        return bytes.length;
      });
      this.last = bytes;
    });
    this.saving = next.catch(() => undefined);
    return next;
  }

  get bytes(): number {
    return this.last?.length ?? 0;
  }
}

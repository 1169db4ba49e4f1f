// Every file-system call the store makes, in one narrow interface: the real one here, and in the
// tests one that keeps only what fsync made durable and loses the rest at a simulated power cut
// (test/helpers/crashFs.ts), the way SQLite's crash tests run on a test VFS.
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { lstat, mkdir, open, readdir, readFile, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { powers } from '../../shared/platform/powers';

/** An open file. Every read and write names its position: the store never relies on a file offset. */
export interface StoreFile {
  size(): Promise<number>;
  /** Reads up to `length` bytes at `position` into `buf` at `offset`; how many were read. */
  read(buf: Buffer, offset: number, length: number, position: number): Promise<number>;
  /** Writes up to `length` bytes of `buf` from `offset` at `position`; how many were written. */
  write(buf: Buffer, offset: number, length: number, position: number): Promise<number>;
  truncate(length: number): Promise<void>;
  /** fsync: data and metadata. */
  sync(): Promise<void>;
  /** fdatasync: data and what is needed to read it back (its size). */
  datasync(): Promise<void>;
  close(): Promise<void>;
}

/** A file open for synchronous reads: a message body is read while a reply is being built. */
export interface StoreFileReader {
  read(buf: Buffer, offset: number, length: number, position: number): number;
  close(): void;
}

/**
 * `read`: must exist. `update`: read and write, created (0600) if missing. `replace`: write only,
 * created (0600) or emptied.
 */
export type OpenMode = 'read' | 'update' | 'replace';

export interface StoreFs {
  open(path: string, mode: OpenMode): Promise<StoreFile>;
  openReader(path: string): StoreFileReader;
  readFile(path: string): Promise<Buffer>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Removes an empty directory. */
  rmdir(path: string): Promise<void>;
  /** mkdir -p with `mode`; the first directory it created, or undefined if `path` was there. */
  mkdirs(path: string, mode: number): Promise<string | undefined>;
  lstat(path: string): Promise<{ isDirectory: boolean; uid: number; mode: number; size: number }>;
  /** fsync of a directory: the names created, renamed or removed in it are durable once it resolves. */
  syncDir(path: string): Promise<void>;
  /** The names in a directory. */
  list(path: string): Promise<string[]>;
}

const FLAGS: Record<OpenMode, number> = {
  read: constants.O_RDONLY,
  update: constants.O_RDWR | constants.O_CREAT,
  replace: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC,
};

function nodeFile(fh: FileHandle): StoreFile {
  return {
    size: async () => (await fh.stat()).size,
    read: async (buf, offset, length, position) => (await fh.read(buf, offset, length, position)).bytesRead,
    write: async (buf, offset, length, position) => (await fh.write(buf, offset, length, position)).bytesWritten,
    truncate: (length) => fh.truncate(length),
    sync: () => fh.sync(),
    datasync: () => fh.datasync(),
    close: () => fh.close(),
  };
}

export const nodeFs: StoreFs = {
  open: async (path, mode) => nodeFile(await open(path, FLAGS[mode], 0o600)),
  openReader(path) {
    const fd = openSync(path, 'r');
    return {
      read: (buf, offset, length, position) => readSync(fd, buf, offset, length, position),
      close: () => closeSync(fd),
    };
  },
  readFile: (path) => readFile(path),
  rename: (from, to) => rename(from, to),
  unlink: (path) => unlink(path),
  rmdir: (path) => rmdir(path),
  list: (path) => readdir(path),
  mkdirs: (path, mode) => mkdir(path, { recursive: true, mode }),
  lstat: async (path) => {
    const st = await lstat(path);
    return { isDirectory: st.isDirectory(), uid: st.uid, mode: st.mode, size: st.size };
  },
  async syncDir(path) {
    if (!powers.dirSync) return; // Windows: a folder cannot be opened for fsync
    const fh = await open(path, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  },
};

/** Writes all of `buf` at `position`, however many writes it takes. */
export async function writeAll(file: StoreFile, buf: Buffer, position: number): Promise<void> {
  for (let done = 0; done < buf.length;) done += await file.write(buf, done, buf.length - done, position + done);
}

/**
 * Creates the folder and any missing parents, and fsyncs the parent of each level it created:
 * POSIX makes a new directory's name durable only then (ext4 happens to commit it with the first
 * fdatasync inside; a filesystem that keeps no more than POSIX promises loses the whole store).
 */
export async function makeDurableDir(fs: StoreFs, dir: string): Promise<void> {
  const first = await fs.mkdirs(dir, 0o700);
  if (first === undefined) return; // it was there
  const top = resolve(first);
  const created: string[] = []; // from the top level made down to `dir`
  for (let d = resolve(dir); ; d = dirname(d)) {
    created.unshift(d);
    if (d === top || d === dirname(d)) break;
  }
  for (const d of created) await fs.syncDir(dirname(d));
}

// A file system in memory that keeps no more than POSIX promises across a power cut: per file,
// what its own fsync/fdatasync made durable; per directory, the names (created, renamed, removed)
// its own fsync made durable. Everything else is pending, and at a cut any prefix of it may or may
// not have reached the disk, the last write maybe torn. A failed fsync behaves as Linux's does
// (PostgreSQL's "fsyncgate"): the pending writes it was to flush are dropped from the disk's
// future, though reads still see them, and the next fsync succeeds, proving nothing.
//
// `onMutation` runs before every call that changes something, with the state the disk could be in
// if the power went right then: a test records these cheaply (buffers are shared, never changed)
// and builds the images later.
import { createHash } from 'node:crypto';
import { basename, dirname, posix } from 'node:path';
import type { OpenMode, StoreFile, StoreFileReader, StoreFs } from '../../extension/hub/store/storeFs';

type FileOp =
  { at: number; kind: 'write'; position: number; bytes: Buffer } | { at: number; kind: 'truncate'; length: number };
type DirOp =
  | { at: number; kind: 'link'; name: string; node: Node }
  | { at: number; kind: 'unlink'; name: string }
  | { at: number; kind: 'rename'; from: string; to: string };

interface FileNode {
  kind: 'file';
  /** What a read sees now. */
  data: Buffer;
  /** What survives a cut for sure; replaced (never changed) at each sync. */
  durable: Buffer;
  pending: FileOp[];
}

interface DirNode {
  kind: 'dir';
  entries: Map<string, Node>;
  durable: Map<string, Node>;
  pending: DirOp[];
}

type Node = FileNode | DirNode;

/** The disk as it could be at one instant: each node's durable part and what is pending on it. */
export interface DiskState {
  at: number;
  /** What the call about to run is, for a failure to name the cut. */
  before: string;
  root: DirNode;
  nodes: Map<Node, { durable: Buffer | Map<string, Node>; pending: (FileOp | DirOp)[] }>;
}

/** Which pending operations reach the disk, per node: how many of its pending ops, and whether the last one kept is torn. */
export type Survival = (node: 'file' | 'dir', pending: readonly { at: number }[]) => { keep: number; torn?: boolean };

/** The ways a cut can leave the disk (ALICE's kind of crash states, a chosen few of them). */
export const CUTS: Record<string, (state: DiskState) => Survival | undefined> = {
  /** Nothing pending reached the disk. */
  lost: () => () => ({ keep: 0 }),
  /** Everything did, as after a process kill. */
  kept: () => (_, p) => ({ keep: p.length }),
  /** Everything but the last write, which is torn in half. */
  torn: (state) => {
    const last = latest(state, (op) => op.kind === 'write');
    if (last === undefined) return undefined;
    return (_, p) => {
      const i = p.findIndex((op) => op.at === last);
      return i < 0 ? { keep: p.length } : { keep: i + 1, torn: true };
    };
  },
  /** The names reached the disk, the data did not (a rename before its file's contents). */
  names: () => (kind, p) => ({ keep: kind === 'dir' ? p.length : 0 }),
  /** The data reached the disk, the names did not. */
  data: () => (kind, p) => ({ keep: kind === 'file' ? p.length : 0 }),
  /** The older half of what was pending, in the order it was issued. */
  half: (state) => {
    const ats = [...state.nodes.values()].flatMap((n) => n.pending.map((op) => op.at)).sort((a, b) => a - b);
    if (ats.length < 2) return undefined;
    const cutoff = ats[Math.floor(ats.length / 2)];
    return (_, p) => ({ keep: p.filter((op) => op.at < cutoff).length });
  },
};

/** A read as POSIX makes it: past the end, nothing. */
function readAt(data: Buffer, buf: Buffer, offset: number, length: number, position: number): number {
  return position >= data.length ? 0 : data.copy(buf, offset, position, Math.min(data.length, position + length));
}

function latest(state: DiskState, which: (op: FileOp | DirOp) => boolean): number | undefined {
  let at: number | undefined;
  for (const n of state.nodes.values())
    for (const op of n.pending) if (which(op) && (at === undefined || op.at > at)) at = op.at;
  return at;
}

/** The files and folders a cut leaves, by path. */
export interface DiskImage {
  files: Map<string, Buffer>;
  dirs: Set<string>;
}

function applyFile(buf: Buffer, op: FileOp, torn: boolean): Buffer {
  if (op.kind === 'truncate')
    return op.length <= buf.length
      ? buf.subarray(0, op.length)
      : Buffer.concat([buf, Buffer.alloc(op.length - buf.length)]);
  const bytes = torn ? op.bytes.subarray(0, Math.floor(op.bytes.length / 2)) : op.bytes;
  const end = Math.max(buf.length, op.position + bytes.length);
  const out = Buffer.alloc(end);
  buf.copy(out);
  bytes.copy(out, op.position);
  return out;
}

function applyDir(entries: Map<string, Node>, op: DirOp): void {
  if (op.kind === 'link') entries.set(op.name, op.node);
  else if (op.kind === 'unlink') entries.delete(op.name);
  else {
    const node = entries.get(op.from);
    entries.delete(op.from);
    if (node) entries.set(op.to, node);
  }
}

/** The disk after a cut at `state`, with `survival` choosing what of the pending work reached it. */
export function imageOf(state: DiskState, survival: Survival): DiskImage {
  const files = new Map<string, Buffer>();
  const dirs = new Set<string>();
  const contents = (node: Node) => {
    const snap = state.nodes.get(node)!;
    const { keep, torn } = survival(node.kind, snap.pending);
    return { snap, keep, torn: !!torn };
  };
  const walk = (dir: DirNode, path: string) => {
    dirs.add(path);
    const { snap, keep } = contents(dir);
    const entries = new Map(snap.durable as Map<string, Node>);
    for (const op of snap.pending.slice(0, keep) as DirOp[]) applyDir(entries, op);
    for (const [name, node] of entries) {
      const p = posix.join(path, name);
      if (node.kind === 'dir') walk(node, p);
      else {
        const f = contents(node);
        let buf = f.snap.durable as Buffer;
        const ops = f.snap.pending.slice(0, f.keep) as FileOp[];
        ops.forEach((op, i) => (buf = applyFile(buf, op, f.torn && i === ops.length - 1)));
        files.set(p, buf);
      }
    }
  };
  walk(state.root, '/');
  return { files, dirs };
}

/** One hash for an image, so equal crash states are checked once. */
export function imageKey(image: DiskImage): string {
  const h = createHash('sha256');
  for (const d of [...image.dirs].sort()) h.update(`d ${d}\n`);
  for (const p of [...image.files.keys()].sort())
    h.update(`f ${p} ${image.files.get(p)!.length}\n`).update(image.files.get(p)!);
  return h.digest('hex');
}

/** Each distinct image the cuts can leave of `states`, once, with the cut and the state it was cut in. */
export function* distinctImages(
  states: DiskState[],
): Generator<{ image: DiskImage; cut: string; state: DiskState; where: string }> {
  const seen = new Set<string>();
  for (const state of states)
    for (const [cut, make] of Object.entries(CUTS)) {
      const survival = make(state);
      if (!survival) continue;
      const image = imageOf(state, survival);
      const key = imageKey(image);
      if (seen.has(key)) continue;
      seen.add(key);
      yield { image, cut, state, where: `cut ${cut} before "${state.before}" (#${state.at})` };
    }
}

function errno(code: string, call: string, path: string): NodeJS.ErrnoException {
  const e = new Error(`${code}: ${call} '${path}'`) as NodeJS.ErrnoException;
  e.code = code;
  return e;
}

/** Which call fails next, and how: a fault the test arms (EIO from an fdatasync, ENOSPC from a write, …). */
export interface Fault {
  call: 'write' | 'sync' | 'datasync' | 'rename' | 'open' | 'truncate' | 'syncDir';
  /** The path the call is on must match. */
  path: RegExp;
  code: string;
  /** How many matching calls fail (default 1; Infinity until disarmed). */
  times?: number;
  /**
   * A failed sync's pending writes: dropped (default, Linux marks the pages clean and never
   * writes them) or landed on the disk all the same (the error was about another block).
   */
  landed?: boolean;
}

export interface CrashFsOptions {
  onMutation?: (state: DiskState) => void;
  /** How long each fsync/fdatasync takes, so that batches overlap as on a real disk (default 0). */
  syncDelayMs?: number;
  /** Calls that do nothing, as if the code that makes them were deleted (the mutation table). */
  skip?: (call: 'sync' | 'datasync' | 'syncDir', path: string, pendingNames: string[]) => boolean;
}

export class CrashFs implements StoreFs {
  private readonly root: DirNode = { kind: 'dir', entries: new Map(), durable: new Map(), pending: [] };
  private readonly nodes = new Set<Node>([this.root]);
  private counter = 0;
  faults: Fault[] = [];
  /** Every call made, in order (`call path`), for a failure to show. */
  readonly calls: string[] = [];

  constructor(private readonly options: CrashFsOptions = {}) {}

  /** A file system holding `image`, all of it durable. */
  static from(image: DiskImage, options?: CrashFsOptions): CrashFs {
    const fs = new CrashFs(options);
    for (const d of [...image.dirs].sort()) if (d !== '/') fs.dirAt(dirname(d)).entries.set(basename(d), fs.newDir());
    for (const [p, buf] of image.files) {
      const node: FileNode = { kind: 'file', data: Buffer.from(buf), durable: Buffer.from(buf), pending: [] };
      fs.nodes.add(node);
      fs.dirAt(dirname(p)).entries.set(basename(p), node);
    }
    for (const n of fs.nodes) if (n.kind === 'dir') n.durable = new Map(n.entries);
    return fs;
  }

  /** The disk right now, as a cut would find it. */
  state(before: string): DiskState {
    const nodes: DiskState['nodes'] = new Map();
    for (const n of this.nodes) nodes.set(n, { durable: n.durable, pending: n.pending.slice() });
    return { at: this.counter, before, root: this.root, nodes };
  }

  /** Every file's current contents (what reads see), by path. */
  files(): Map<string, Buffer> {
    const out = new Map<string, Buffer>();
    const walk = (dir: DirNode, path: string) => {
      for (const [name, node] of dir.entries) {
        if (node.kind === 'dir') walk(node, posix.join(path, name));
        else out.set(posix.join(path, name), node.data);
      }
    };
    walk(this.root, '/');
    return out;
  }

  private newDir(): DirNode {
    const d: DirNode = { kind: 'dir', entries: new Map(), durable: new Map(), pending: [] };
    this.nodes.add(d);
    return d;
  }

  private lookup(path: string): Node | undefined {
    let node: Node = this.root;
    for (const part of posix.resolve(path).split('/').filter(Boolean)) {
      if (node.kind !== 'dir') return undefined;
      const next: Node | undefined = node.entries.get(part);
      if (!next) return undefined;
      node = next;
    }
    return node;
  }

  private dirAt(path: string): DirNode {
    const n = this.lookup(path);
    if (!n) throw errno('ENOENT', 'open', path);
    if (n.kind !== 'dir') throw errno('ENOTDIR', 'open', path);
    return n;
  }

  /** Notes the call, fails it if a fault is armed for it, and shows the disk to onMutation first. */
  private mutate(
    call: Fault['call'] | 'unlink' | 'rmdir' | 'mkdir',
    path: string,
    onFault?: (f: Fault) => void,
  ): number {
    this.calls.push(`${call} ${path}`);
    this.options.onMutation?.(this.state(`${call} ${path}`));
    const fault = this.faults.find((f) => f.call === call && f.path.test(path));
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.times <= 0) this.faults.splice(this.faults.indexOf(fault), 1);
      this.calls.push(`  failed: ${fault.code}`);
      onFault?.(fault);
      throw errno(fault.code, call, path);
    }
    return ++this.counter;
  }

  private link(dir: DirNode, name: string, node: Node, at: number): void {
    dir.entries.set(name, node);
    dir.pending.push({ at, kind: 'link', name, node });
  }

  private file(node: FileNode, path: string): StoreFile {
    let open = true;
    const check = () => {
      if (!open) throw errno('EBADF', 'use', path);
    };
    const sync = async (call: 'sync' | 'datasync') => {
      check();
      const latency = this.options.syncDelayMs;
      if (latency) await new Promise((r) => setTimeout(r, latency)); // sleep: the fake disk's fsync latency, not a wait
      if (this.options.skip?.(call, path, [])) return void this.calls.push(`${call} ${path} (skipped)`);
      // What was pending reaches the disk — not what a read sees, which a failed sync left behind.
      const flush = () => {
        let durable = node.durable;
        for (const op of node.pending) durable = applyFile(durable, op, false);
        node.durable = durable;
        node.pending = [];
      };
      // Failed: the kernel marked the pages clean, written or not; they are never written again.
      this.mutate(call, path, (f) => (f.landed ? flush() : void (node.pending = [])));
      flush();
    };
    return {
      size: async () => (check(), node.data.length),
      read: async (buf, offset, length, position) => (check(), readAt(node.data, buf, offset, length, position)),
      write: async (buf, offset, length, position) => {
        check();
        const at = this.mutate('write', path);
        const bytes = Buffer.from(buf.subarray(offset, offset + length));
        const op: FileOp = { at, kind: 'write', position, bytes };
        node.data = applyFile(node.data, op, false);
        node.pending.push(op);
        return length;
      },
      truncate: async (length) => {
        check();
        const op: FileOp = { at: this.mutate('truncate', path), kind: 'truncate', length };
        node.data = applyFile(node.data, op, false);
        node.pending.push(op);
      },
      sync: () => sync('sync'),
      datasync: () => sync('datasync'),
      close: async () => void (open = false),
    };
  }

  async open(path: string, mode: OpenMode): Promise<StoreFile> {
    const dir = this.dirAt(dirname(path));
    let node = dir.entries.get(basename(path));
    if (node?.kind === 'dir') throw errno('EISDIR', 'open', path);
    if (!node) {
      if (mode === 'read') throw errno('ENOENT', 'open', path);
      const at = this.mutate('open', path);
      node = { kind: 'file', data: Buffer.alloc(0), durable: Buffer.alloc(0), pending: [] };
      this.nodes.add(node);
      this.link(dir, basename(path), node, at);
    } else if (mode === 'replace' && node.data.length > 0) {
      const op: FileOp = { at: this.mutate('truncate', path), kind: 'truncate', length: 0 };
      node.data = Buffer.alloc(0);
      node.pending.push(op);
    }
    return this.file(node, path);
  }

  openReader(path: string): StoreFileReader {
    const node = this.lookup(path);
    if (!node) throw errno('ENOENT', 'open', path);
    if (node.kind !== 'file') throw errno('EISDIR', 'open', path);
    return {
      read: (buf, offset, length, position) => readAt(node.data, buf, offset, length, position),
      close: () => undefined,
    };
  }

  async readFile(path: string): Promise<Buffer> {
    const node = this.lookup(path);
    if (!node) throw errno('ENOENT', 'open', path);
    if (node.kind !== 'file') throw errno('EISDIR', 'read', path);
    return Buffer.from(node.data);
  }

  async rename(from: string, to: string): Promise<void> {
    const dir = this.dirAt(dirname(from));
    if (dirname(from) !== dirname(to)) throw new Error('CrashFs renames within one folder only');
    const node = dir.entries.get(basename(from));
    if (!node) throw errno('ENOENT', 'rename', from);
    const target = dir.entries.get(basename(to));
    if (target && target !== node) {
      // POSIX: a folder replaces only an empty folder, a file only a file.
      if (node.kind === 'dir' && target.kind !== 'dir') throw errno('ENOTDIR', 'rename', to);
      if (node.kind === 'file' && target.kind === 'dir') throw errno('EISDIR', 'rename', to);
      if (target.kind === 'dir' && target.entries.size > 0) throw errno('ENOTEMPTY', 'rename', to);
    }
    const at = this.mutate('rename', to);
    dir.entries.delete(basename(from));
    dir.entries.set(basename(to), node);
    dir.pending.push({ at, kind: 'rename', from: basename(from), to: basename(to) });
  }

  async unlink(path: string): Promise<void> {
    const dir = this.dirAt(dirname(path));
    if (!dir.entries.has(basename(path))) throw errno('ENOENT', 'unlink', path);
    const at = this.mutate('unlink', path);
    dir.entries.delete(basename(path));
    dir.pending.push({ at, kind: 'unlink', name: basename(path) });
  }

  async mkdirs(path: string, _mode: number): Promise<string | undefined> {
    let first: string | undefined;
    let dir = this.root;
    let at = '/';
    for (const part of posix.resolve(path).split('/').filter(Boolean)) {
      at = posix.join(at, part);
      const next = dir.entries.get(part);
      if (next?.kind === 'file') throw errno('ENOTDIR', 'mkdir', at);
      if (next) {
        dir = next;
        continue;
      }
      const made = this.newDir();
      this.link(dir, part, made, this.mutate('mkdir', at));
      first ??= at;
      dir = made;
    }
    return first;
  }

  async rmdir(path: string): Promise<void> {
    const dir = this.dirAt(dirname(path));
    const node = dir.entries.get(basename(path));
    if (!node) throw errno('ENOENT', 'rmdir', path);
    if (node.kind !== 'dir') throw errno('ENOTDIR', 'rmdir', path);
    if (node.entries.size > 0) throw errno('ENOTEMPTY', 'rmdir', path);
    const at = this.mutate('rmdir', path);
    dir.entries.delete(basename(path));
    dir.pending.push({ at, kind: 'unlink', name: basename(path) });
  }

  async lstat(path: string): Promise<{ isDirectory: boolean; uid: number; mode: number; size: number }> {
    const node = this.lookup(path);
    if (!node) throw errno('ENOENT', 'lstat', path);
    return {
      isDirectory: node.kind === 'dir',
      uid: process.getuid?.() ?? 0,
      mode: node.kind === 'dir' ? 0o40700 : 0o100600,
      size: node.kind === 'dir' ? 4096 : node.data.length,
    };
  }

  async list(path: string): Promise<string[]> {
    return [...this.dirAt(path).entries.keys()];
  }

  async syncDir(path: string): Promise<void> {
    const dir = this.dirAt(path);
    const names = dir.pending.flatMap((op) => (op.kind === 'rename' ? [op.from, op.to] : [op.name]));
    if (this.options.skip?.('syncDir', path, names))
      return void this.calls.push(`syncDir ${path} (skipped: ${names.join(', ')})`);
    this.mutate('syncDir', path); // failed, its names may or may not be durable: still pending
    dir.durable = new Map(dir.entries);
    dir.pending = [];
  }
}

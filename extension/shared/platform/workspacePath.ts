// How a workspace's path becomes the text its key is hashed from. Windows file systems ignore case
// and take either slash, so `C:\Repo` and `c:/repo/` are one folder and must be one hub; elsewhere
// the path is compared as the file system gives it (case-sensitive on Linux).
import { win32 } from 'node:path';

/** The form of `path` (already absolute and resolved) two processes agree on for one folder. */
export function keyPath(platform: NodeJS.Platform, path: string): string {
  if (platform !== 'win32') return path;
  // normalize: one kind of separator, no `.` or doubled ones; then no trailing one but a root's.
  const normal = win32.normalize(path);
  const trimmed = normal.length > win32.parse(normal).root.length ? normal.replace(/\\+$/, '') : normal;
  return trimmed.toLowerCase();
}

/** This machine's form of a workspace path for its key. */
export function thisKeyPath(path: string): string {
  return keyPath(process.platform, path);
}

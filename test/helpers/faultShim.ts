// Builds test/helpers/faultShim.c (an LD_PRELOAD library that fails chosen file calls of a real
// process) with the system's C compiler, once per checkout, and arms its rule for a test.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './hubProcess';

const SOURCE = join(ROOT, 'test', 'helpers', 'faultShim.c');

/** The built library's path, or why it cannot be built here. */
export function faultShim(): { lib: string } | { missing: string } {
  const lib = join(ROOT, 'out', 'faultShim.so');
  if (existsSync(lib) && statSync(lib).mtimeMs >= statSync(SOURCE).mtimeMs) return { lib };
  if (process.platform !== 'linux') return { missing: 'the fault shim is an LD_PRELOAD library for Linux' };
  mkdirSync(join(ROOT, 'out'), { recursive: true });
  try {
    execFileSync('cc', ['-shared', '-fPIC', '-O2', '-Wall', '-o', lib, SOURCE, '-ldl'], { stdio: 'pipe' });
  } catch (e) {
    return {
      missing: `the fault shim did not build with cc (${(e as Error).message.split('\n')[0]}); install a C compiler (Debian: gcc)`,
    };
  }
  return { lib };
}

export type ShimCall = 'fdatasync' | 'fsync' | 'write' | 'rename';

/** The rule file a hub started with `env` reads: `arm` makes the next `count` matching calls fail. */
export function faultRule(dir: string, lib: string) {
  const file = join(dir, 'faults');
  writeFileSync(file, '');
  return {
    env: { LD_PRELOAD: lib, HANDOFF_FAULTS: file },
    arm: (call: ShimCall, pathPart: string, code: string, count = 1) =>
      writeFileSync(file, `${call} ${pathPart} ${code} ${count}\n`),
    disarm: () => writeFileSync(file, ''),
    /** How many calls the current rule has failed. */
    fired: () => (existsSync(`${file}.fired`) ? Number(readFileSync(`${file}.fired`, 'utf8').trim()) : 0),
  };
}

// The editor starts its hub with V8's compile cache in a private folder of ours (client/hubLaunch.ts):
// the 2 MB hub bundle is compiled once, not at every window open, Reload Window or Restart Hub.
// The real hub binary, started with the environment hubLaunch gives it, fills the cache, and a
// second start reads it back (the cache's files are left as they were).
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hubLaunch } from '../../extension/client/hubLaunch';
import { compileCacheDir } from '../../extension/shared/paths';
import { startHub, tempDir } from '../helpers/hubProcess';

function filesUnder(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) out.set(join(e.parentPath, e.name), statSync(join(e.parentPath, e.name)).mtimeMs);
  return out;
}

describe("the hub's compile cache", () => {
  it('hubLaunch names a private folder under XDG_CACHE_HOME; the hub fills it once and reads it on the next start', async () => {
    const cacheHome = tempDir('compile-cache');
    const before = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cacheHome;
    let cache: string | undefined;
    try {
      cache = hubLaunch({ workspace: '/w', folder: '/w', store: '/st', socket: '/s.sock' }, '/ext', 'k', {}, 1).env
        .NODE_COMPILE_CACHE;
      assert.equal(cache, compileCacheDir());
    } finally {
      if (before === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = before;
    }
    assert.equal(cache, join(cacheHome, 'handoff', 'v8'));
    assert.equal(statSync(cache).mode & 0o777, 0o700, 'nobody else may write what the hub runs');

    const first = await startHub({ env: { NODE_COMPILE_CACHE: cache } });
    await first.stop();
    const written = filesUnder(cache);
    assert.ok(written.size > 0, 'the first start wrote the compiled bundle');
    const second = await startHub({ env: { NODE_COMPILE_CACHE: cache } });
    await second.stop();
    assert.deepEqual(filesUnder(cache), written, 'the second start read it and had nothing new to write');
  });
});

// The CLI without the editor: `npm pack`'s tarball, installed into an empty prefix with a plain
// `npm install` (offline: the bundles need no dependencies), gives a working `handoff` and
// `handoff-mcp`; on a Node older than 22 they say which Node they need, in one line.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { NODE, ROOT, tempDir } from '../helpers/hubProcess';

describe('the npm package', () => {
  it(
    'installs from its tarball into a temp prefix; handoff hub and handoff-mcp work; old Node gets one line',
    { timeout: 180_000 },
    async () => {
      const dir = tempDir('pack');
      const env = {
        ...process.env,
        PATH: `${dirname(NODE)}:${process.env.PATH}`,
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
      };
      execFileSync('npm', ['pack', '--pack-destination', dir], { cwd: ROOT, env, stdio: 'pipe' });
      const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
      const prefix = join(dir, 'prefix');
      mkdirSync(prefix);
      execFileSync('npm', ['install', '--offline', '--prefix', prefix, join(dir, tgz)], { env, stdio: 'pipe' });
      const bin = join(prefix, 'node_modules', '.bin');
      assert.ok(existsSync(join(bin, 'handoff')) && existsSync(join(bin, 'handoff-mcp')));
      assert.ok(
        !existsSync(join(prefix, 'node_modules', 'matrix-js-sdk')),
        'no runtime dependencies: the bundles carry them',
      );
      assert.match(execFileSync(join(bin, 'handoff'), ['--help'], { env, encoding: 'utf8' }), /usage: handoff/);

      const ws = tempDir('pack-ws');
      const socket = join(tempDir('pack-run'), 'hub.sock');
      const hub = spawn(
        join(bin, 'handoff'),
        ['hub', '--workspace', ws, '--store', join(dir, 'store'), '--socket', socket],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      try {
        await new Promise<void>((resolve, reject) => {
          let out = '';
          const on = (d: Buffer) => {
            out += d;
            if (out.includes('listening on')) resolve();
          };
          hub.stdout.on('data', on);
          hub.stderr.on('data', on);
          hub.once('exit', (code) => reject(new Error(`the installed hub exited ${code}: ${out}`)));
        });
        const client = new Client({ name: 'pack-probe', version: '1' });
        await client.connect(
          new StdioClientTransport({
            command: join(bin, 'handoff-mcp'),
            args: ['--name', 'packed'],
            env: { ...env, HANDOFF_HUB: socket } as Record<string, string>,
          }),
        );
        const who = await client.callTool({ name: 'whoami', arguments: {} });
        assert.equal((who.structuredContent as { identity: string }).identity, 'packed');
        await client.close();
      } finally {
        hub.kill('SIGTERM');
      }

      // The machine's own Node (Debian's is 20 here): one line naming the Node needed, exit 1.
      const system = spawnSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
      const major = Number(system.stdout?.split('.')[0]);
      const old = spawnSync(
        '/usr/bin/node',
        [join(prefix, 'node_modules', 'handoff-bus', 'dist', 'cli.js'), 'hub', '--workspace', ws],
        { encoding: 'utf8' },
      );
      if (major && major < 22) {
        assert.equal(old.status, 1);
        assert.equal(old.stderr.trim().split('\n').length, 1, `one line: ${old.stderr}`);
        assert.match(old.stderr, /^handoff needs Node\.js 22 or later; this is Node v\d+/);
      } else {
        assert.ok(system.error || major >= 22, 'a system Node of 22 or later runs it');
      }
    },
  );
});

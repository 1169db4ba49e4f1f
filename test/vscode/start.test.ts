// The README's run command, smoke-tested: `npm start` (scripts/start.mjs --server, on the tool
// cache this run uses) prints the URL; the URL answers 200 with the VS Code web workbench; a
// browser opening it gets the extension activated; nothing in what the person sees is an error
// line (no marketplace or update lookups that fail offline); SIGTERM stops the server with every
// process under it and frees the port.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT, tempDir } from '../helpers/hubProcess';
import { waitFor } from '../helpers/wait';
import { announce, itNeeds, vscodeMissing } from '../helpers/tools.mjs';
import { statusBarItem } from './harness.mjs';
import { alive } from './processes';

const missing = vscodeMissing();
announce('the npm start smoke test', missing);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Every process below pid, through /proc (also those that left its process group). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // exited while we looked
    }
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length)
    for (const c of children.get(stack.pop()!) ?? []) {
      out.push(c);
      stack.push(c);
    }
  return out;
}

// Lines a person would read as something having gone wrong.
const ERROR_LINE =
  /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|getaddrinfo|\berror\b|\bERR\b|Error:|exception|fail(ed|ure)?\b/i;

describe('npm start', () => {
  itNeeds(
    missing,
    'prints the URL; it answers 200 with the workbench and activates the extension; no error lines; SIGTERM stops it all and frees the port',
    { timeout: 240_000 },
    async () => {
      const port = await freePort();
      const state = tempDir('start');
      const start = spawn(process.execPath, [join(ROOT, 'scripts', 'start.mjs'), '--server'], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(port), HANDOFF_START_STATE: state },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      start.stdout.setEncoding('utf8').on('data', (d) => {
        out += d;
      });
      start.stderr.setEncoding('utf8').on('data', (d) => {
        out += d;
      });
      let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      const exit = new Promise<void>((resolve) =>
        start.on('exit', (code, signal) => {
          exited = { code, signal };
          resolve();
        }),
      );
      let tree: number[];
      try {
        const urlRe = new RegExp(`^\\s+(http://127\\.0\\.0\\.1:${port}/\\?folder=\\S+)$`, 'm');
        await waitFor(
          () => {
            assert.equal(exited, undefined, `npm start exited before printing the URL:\n${out}`);
            return urlRe.test(out);
          },
          180_000,
          () => `the URL:\n${out}`,
        );
        const url = urlRe.exec(out)![1];

        const res = await fetch(url);
        assert.equal(res.status, 200);
        const html = await res.text();
        assert.match(html, /<meta id="vscode-workbench-web-configuration"/, 'the VS Code web workbench page');
        assert.match(html, /vs\/code\/browser\/workbench\/workbench/, 'it loads the workbench bundle');
        assert.doesNotMatch(
          html,
          /extensionsGallery&quot;:\{&quot;serviceUrl/,
          'no marketplace configured for the workbench',
        );

        // A person opening the URL: the workbench connects, the extension host starts, Handoff activates.
        const { chromium } = await import('playwright-core');
        const browser = await chromium.launch({
          executablePath: process.env.HANDOFF_CHROMIUM || '/usr/bin/chromium',
          headless: true,
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--no-first-run',
            '--disable-dev-shm-usage',
          ],
        });
        try {
          const page = await browser.newPage();
          await page.goto(url);
          await statusBarItem(page, 'Handoff').first().waitFor({ timeout: 60_000 });
          // Give the server the time in which it used to look for extension updates and fail.
          await sleep(5000); // sleep: proving an absence: nothing marks "would have looked by now"
        } finally {
          await browser.close();
        }
        tree = descendants(start.pid!);
        assert.ok(tree.length > 0, 'the VS Code server runs under npm start');
      } finally {
        start.kill('SIGTERM');
        await Promise.race([exit, sleep(20_000, undefined, { ref: false })]); // sleep: not a wait: the exit's deadline
        if (!exited) start.kill('SIGKILL');
      }
      assert.deepEqual(exited, { code: 0, signal: null }, `npm start stops cleanly on SIGTERM:\n${out}`);
      await waitFor(() => !tree.some(alive), 10_000).catch(() => undefined); // the assertion says which are left
      assert.deepEqual(tree.filter(alive), [], 'no process of the server is left');
      assert.ok(await portFree(port), `port ${port} is free again`);

      const errors = out.split('\n').filter((l) => ERROR_LINE.test(l));
      assert.deepEqual(errors, [], `error lines in what npm start printed:\n${out}`);
      assert.doesNotMatch(out, /Web UI available at/, "the server's own URL (without the extension) is not shown");
    },
  );

  it('on a machine without the VS Code server, says what installing it takes and installs nothing without a yes', async () => {
    const tools = tempDir('start-tools');
    const state = tempDir('start-state');
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'start.mjs'), '--server'], {
      cwd: ROOT,
      env: { ...process.env, HANDOFF_TOOLS: tools, HANDOFF_START_STATE: state, HANDOFF_YES: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 120_000,
    });
    const out = run.stdout + run.stderr;
    assert.equal(run.status, 1, out);
    assert.match(out, /which is not installed yet\. Installing it:\n {2}- downloads the VS Code server .* into /);
    assert.match(out, /Nothing was installed\. Run `npm start -- --yes`|no root, no sudo/);
    assert.deepEqual(readdirSync(tools), [], 'the tool cache is as it was: empty');
  });
});

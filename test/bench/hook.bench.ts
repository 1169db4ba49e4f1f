// `npm run bench`, part 3: what a Handoff hook costs the agent it rides on. Every tool call of a
// connected agent runs one, so its wall time (spawn to exit, as the CLI sees it) is measured
// beside a bare `node -e 0` in the same run, alternating, medians and p95:
//   nothing waiting · one handoff to surface (a journal write) · no hub · a hub that never answers.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { connectAgent } from '../helpers/agent';
import { DIST, NODE, startHub, tempDir } from '../helpers/hubProcess';

const quick = process.argv.includes('--quick');
const N = quick ? 15 : 60;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

function timed(args: string[], env: Record<string, string>, input: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - t0));
    child.stdin.end(input);
  });
}

async function main(): Promise<void> {
  const hub = await startHub();
  const alice = await connectAgent({ socket: hub.socket, name: 'alice' });
  await (await connectAgent({ socket: hub.socket, name: 'bob' })).close();
  const dir = tempDir('hook-bench');
  const silent = join(dir, 'silent.sock');
  const stalled = createServer(() => undefined);
  await new Promise<void>((r) => stalled.listen(silent, r));
  const hook = (socket: string) => [join(DIST, 'hook.js'), 'claude', 'PostToolUse', '--name', 'bob', '--hub', socket];
  const input = (s: string) =>
    JSON.stringify({
      session_id: s,
      hook_event_name: 'PostToolUse',
      cwd: hub.workspace,
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
    });
  // As Claude Code runs it: without CLAUDECODE=1 the hook exits before it asks the hub at all.
  const claude = { CLAUDECODE: '1' };
  const cases: Record<string, () => Promise<number>> = {
    'bare node -e 0': () => timed(['-e', '0'], {}, ''),
    'hook, nothing waiting': () => timed(hook(hub.socket), claude, input('idle')),
    'hook, one handoff to surface': async () => {
      await alice.ok('send_handoff', { to: 'bob', body: 'bench handoff', insist: true });
      return timed(hook(hub.socket), claude, input('busy'));
    },
    'hook, no hub': () => timed(hook(join(dir, 'none.sock')), claude, input('x')),
    'hook, hub never answers': () => timed(hook(silent), claude, input('x')),
  };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (let i = 0; i < N; i++) for (const [k, run] of Object.entries(cases)) samples[k].push(await run());
  const bare = pct(samples['bare node -e 0'], 0.5);
  console.log(`\nHook wall time (spawn → exit), ${N} alternating runs each:\n`);
  console.log('| case | p50 | p95 | p50 ÷ bare node |\n|---|---|---|---|');
  for (const [k, xs] of Object.entries(samples))
    console.log(
      `| ${k} | ${pct(xs, 0.5).toFixed(1)} ms | ${pct(xs, 0.95).toFixed(1)} ms | ${(pct(xs, 0.5) / bare).toFixed(2)} |`,
    );
  stalled.close();
  await alice.close();
  await hub.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

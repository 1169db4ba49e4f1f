// `npm run bench`, part 3: what a Handoff hook costs the agent it rides on. Every tool call of a
// connected agent runs one, so its wall time (spawn to exit, as the CLI sees it) is measured
// beside a bare `node -e 0` in the same run, alternating, medians and p95:
//   nothing waiting (the hub's quiet mark: no question asked) · a handoff waiting, already in the
//   session (asked, nothing new) · one handoff to surface (a journal write) · no hub · a hub that
//   never answers.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { connectAgent } from '../helpers/agent';
import { HOOK_MARK } from '../../extension/shared/connect/launch';
import { DIST, NODE, startHub, tempDir } from '../helpers/hubProcess';

const quick = process.argv.includes('--quick');
/** `--against=OLD/hook.js[,…]` adds "nothing waiting" with other builds of the hook, to compare a change side by side. */
const against =
  process.argv
    .find((a) => a.startsWith('--against='))
    ?.slice('--against='.length)
    .split(',') ?? [];
const N = quick ? 15 : 60;
const execFileAsync = promisify(execFile);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

function timed(args: string[], env: Record<string, string>, input: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, {
      // CLAUDECODE=1 as Claude Code sets it: without it the Claude-format hook ends at once (#24).
      env: { PATH: process.env.PATH ?? '', CLAUDECODE: '1', ...env },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - t0));
    child.stdin.end(input);
  });
}

async function main(): Promise<void> {
  const hub = await startHub();
  for (const name of ['alice', 'bob', 'carol', 'dave'])
    await (await connectAgent({ socket: hub.socket, name })).close();
  // alice sends through the CLI: an agent session in this process would be the nearest agent of
  // every hook spawned here, and a hook under another identity's agent is refused.
  const send = (to: string, body: string) =>
    execFileAsync(NODE, [join(DIST, 'cli.js'), 'send', '--as', 'alice', '--to', to, '--hub', hub.socket, body]);
  const dir = tempDir('hook-bench');
  const silent = join(dir, 'silent.sock');
  const stalled = createServer(() => undefined);
  await new Promise<void>((r) => stalled.listen(silent, r));
  // The command line connect installs (extension/shared/connect/launch.ts), run as from an editor's
  // integrated terminal (HANDOFF_HUB set); with no hub, a workspace no hub serves.
  const hook = (workspace: string, program = join(DIST, 'hook.js'), name = 'bob') => [
    program,
    'claude',
    'PostToolUse',
    '--name',
    name,
    '--workspace',
    workspace,
    ...HOOK_MARK.split(' '),
  ];
  /** Set for one pass before the timed runs: each case's outcome (the hook's trace), to show what it measures. */
  let traced: string | undefined;
  const at = (socket: string) => ({ HANDOFF_HUB: socket, ...(traced ? { HANDOFF_HOOK_TRACE: traced } : {}) });
  let sent = 0;
  const input = (s: string) =>
    JSON.stringify({
      session_id: s,
      hook_event_name: 'PostToolUse',
      cwd: hub.workspace,
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
    });
  const cases: Record<string, () => Promise<number>> = {
    'bare node -e 0': () => timed(['-e', '0'], {}, ''),
    'hook, nothing waiting': () => timed(hook(hub.workspace), at(hub.socket), input('idle')),
    ...Object.fromEntries(
      against.map((program) => [
        `hook, nothing waiting (${program})`,
        () => timed(hook(hub.workspace, program), at(hub.socket), input('idle')),
      ]),
    ),
    'hook, a handoff waiting, already seen (asks the hub)': () =>
      timed(hook(hub.workspace, undefined, 'dave'), at(hub.socket), input('seen')),
    'hook, one handoff to surface': async () => {
      await send('carol', `bench handoff ${++sent}`);
      return timed(hook(hub.workspace, undefined, 'carol'), at(hub.socket), input('busy'));
    },
    'hook, no hub': () => timed(hook(dir), at(join(dir, 'none.sock')), input('x')),
    'hook, hub never answers': () => timed(hook(dir), at(silent), input('x')),
  };
  // bob: answered once with nothing, so marked quiet; dave: one handoff waiting, surfaced in its session.
  await timed(hook(hub.workspace), at(hub.socket), input('idle'));
  await send('dave', 'bench handoff, left unACKed');
  await timed(hook(hub.workspace, undefined, 'dave'), at(hub.socket), input('seen'));
  const outcomes: string[] = [];
  for (const [k, run] of Object.entries(cases)) {
    if (!k.startsWith('hook')) continue;
    traced = join(dir, `${outcomes.length}.ndjson`);
    await run();
    const lines = readFileSync(traced, 'utf8').trim().split('\n');
    outcomes.push(`${k}: ${(JSON.parse(lines.at(-1)!) as { outcome: string }).outcome}`);
  }
  traced = undefined;
  console.log(`\nWhat each case did (the hook's trace, one untimed run): ${outcomes.join('; ')}`);
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
  await hub.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

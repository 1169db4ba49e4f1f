// `npm run bench`, part 4: what an install costs. The sizes of the bundles and of the .vsix, and
// the activation of the extension installed from that .vsix into the VS Code server (no
// development path), over several windows, from VS Code's own extension-host marks: loading
// dist/extension.js, activate(), their sum (what VS Code shows as the activation time), and until
// the hub runs. Medians. `--compare OTHER.vsix` alternates windows of another build in the same
// run (before/after a change).
// Goals (issue 10): activation ≤ 50 ms of extension-host time; dist/extension.js ≤ 1 MB.
import { mkdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { DIST, ROOT, tempDir } from '../helpers/hubProcess';
import { vscodeMissing } from '../helpers/tools.mjs';
import { runVsCode } from '../vscode/harness.mjs';
import { installVsix, packageVsix } from '../vscode/vsix';

const quick = process.argv.includes('--quick');
const RUNS = quick ? 3 : 7;
const compare = process.argv.includes('--compare')
  ? resolve(process.argv[process.argv.indexOf('--compare') + 1])
  : undefined;
const PROBE = join(ROOT, 'test', 'vscode', 'installed');

interface Activation {
  loadMs: number;
  activateMs: number;
  wallMs: number;
  hubReadyMs: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const kb = (bytes: number) => `${(bytes / 1000).toFixed(0)} kB`;

async function main(): Promise<void> {
  const missing = vscodeMissing();
  if (missing) throw new Error(`the install bench needs ${missing}`);
  const dir = tempDir('install-bench');
  const vsix = packageVsix(dir);
  console.log('\nInstall size (kB = 1000 bytes):\n\n| file | size |\n|---|---|');
  for (const f of ['extension.js', 'hubClient.js', 'hub.js', 'matrix.js', 'bridge.js', 'hook.js', 'cli.js'])
    console.log(`| dist/${f} | ${kb(statSync(join(DIST, f)).size)} |`);
  console.log(`| ${basename(vsix)} | ${kb(statSync(vsix).size)} |`);
  if (compare) console.log(`| ${basename(compare)} (compared) | ${kb(statSync(compare).size)} |`);

  const builds = [vsix, ...(compare ? [compare] : [])].map((file, i) => {
    const extensions = join(dir, `extensions-${i}`);
    installVsix(file, extensions, join(dir, `server-data-${i}`));
    return { file, extensions, runs: [] as Activation[] };
  });
  for (let i = 0; i < RUNS; i++) {
    for (const b of builds) {
      const data = join(dir, `data-${i}-${b.runs.length}-${builds.indexOf(b)}`);
      mkdirSync(data);
      const res = await runVsCode({
        extensionPath: PROBE,
        testsPath: join(PROBE, 'activation.js'),
        extensionsDir: b.extensions,
        env: { XDG_DATA_HOME: data },
        timeoutMs: 120_000,
      });
      const line = /\[activation-probe\] (\{.*\})/.exec(res.logs)?.[1];
      if (res.exitCode !== 0 || !line)
        throw new Error(
          `activation window ${i + 1} of ${basename(b.file)} failed:\n${res.logs
            .split('\n')
            .filter((l) => /probe|rror/.test(l))
            .join('\n')}`,
        );
      b.runs.push(JSON.parse(line) as Activation);
    }
  }
  console.log(
    `\nActivation of the installed extension, ${RUNS} windows each${compare ? ', alternating' : ''} (median, min–max; VS Code's marks, 1 ms steps):\n`,
  );
  console.log(
    '| build | load dist/extension.js | activate() | activation (load + activate) | wall, load start → activated | until the hub runs |\n|---|---|---|---|---|---|',
  );
  for (const b of builds) {
    const cell = (f: (r: Activation) => number) => {
      const xs = b.runs.map(f);
      return `${median(xs).toFixed(0)} ms (${Math.min(...xs)}–${Math.max(...xs)})`;
    };
    console.log(
      `| ${basename(b.file)} | ${cell((r) => r.loadMs)} | ${cell((r) => r.activateMs)} | ${cell((r) => r.loadMs + r.activateMs)} | ${cell((r) => r.wallMs)} | ${cell((r) => r.hubReadyMs)} |`,
    );
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

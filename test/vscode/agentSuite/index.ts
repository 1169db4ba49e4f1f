// Extension-host entry for the run with VS Code's own agent enabled (test/vscode/vsCodeAgent.test.ts):
// AI features on, a scripted Ollama model, CLAUDECODE=1 in the editor's environment. Kept apart
// from the other suites, which run with AI features off.
import { format } from 'node:util';
import Mocha from 'mocha';

export async function run(): Promise<void> {
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => console.log(format(...args));
  const mocha = new Mocha({ ui: 'bdd', timeout: 120_000, color: false, reporter: 'spec' });
  mocha.suite.emit(Mocha.Suite.constants.EVENT_FILE_PRE_REQUIRE, globalThis, 'handoff-agent-suites', mocha);
  await import('./vsCodeAgent.suite');
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} extension-host test(s) failed`);
}

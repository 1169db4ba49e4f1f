// Extension-host entry (`extensionTestsPath`): runs the mocha suites inside a real VS Code with
// the extension under development loaded. Resolves when every test passed, rejects otherwise —
// the harness (or @vscode/test-electron) turns that into the exit code.
import { format } from 'node:util';
import Mocha from 'mocha';

export async function run(): Promise<void> {
  // The workbench forwards console.log's raw arguments; format them here so the report reads well.
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => console.log(format(...args));
  // HANDOFF_SUITE_GREP runs only the tests whose titles match (while working on one).
  const grep = process.env.HANDOFF_SUITE_GREP;
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec', ...(grep ? { grep } : {}) });
  // The suites are bundled into this file: give them mocha's globals, then load them.
  mocha.suite.emit(Mocha.Suite.constants.EVENT_FILE_PRE_REQUIRE, globalThis, 'handoff-suites', mocha);
  await import('./extension.suite');
  await import('./terminalWake.suite');
  await import('./realCliWake.suite');
  await import('./matrix.suite');
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} extension-host test(s) failed`);
}

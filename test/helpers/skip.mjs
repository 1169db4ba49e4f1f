// When a suite cannot run because a tool is missing: outside CI it skips, loudly, and says why —
// the install failed (its step and log) or it never ran; under CI=true it fails instead, because a
// green run that skipped the editor or the homeserver proves nothing. Plain JS with no imports but
// node:fs/path, so the extension-host suites (mocha), the .mjs scripts and the node:test files can
// all use it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Under CI=true nothing may be skipped for want of a tool. */
export function strict() {
  return process.env.CI === 'true';
}

/** Where the .ci/setup-*.sh installers put tools, logs and failure markers. */
export function toolsRoot() {
  return process.env.HANDOFF_TOOLS || path.join(process.env.HOME || os.homedir(), '.cache', 'handoff-tools');
}

/**
 * Why the tool that .ci/<setup>.sh installs is not there, in one true sentence: the step that
 * failed and its log when the last install failed (the installer leaves <tools>/<setup>.failed),
 * else that it was never installed.
 */
export function whyMissing(setup, what) {
  let failed;
  try {
    failed = Object.fromEntries(
      fs
        .readFileSync(path.join(toolsRoot(), `${setup}.failed`), 'utf8')
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  } catch {
    /* no failed install recorded */
  }
  if (failed)
    return `${what}: install failed at step "${failed.step}" (exit ${failed.exit}): see ${failed.log}; retry: ${failed.retry}`;
  return `${what} is not installed: run \`bash .ci/${setup}.sh\` (npm test runs it first)`;
}

/** Print the reason where a person reading the test output will see it. */
export function announce(suite, missing) {
  if (!missing) return;
  console.error(`\n*** ${strict() ? 'FAILING (CI=true)' : 'SKIPPING'} ${suite}: ${missing} ***\n`);
}

/** The error a test throws under CI=true instead of skipping. */
export function missingError(missing) {
  return new Error(`${missing} (under CI=true a suite that cannot run fails instead of skipping)`);
}

/** Inside a running test (node:test's t, or mocha's this): skip with the reason, or fail under CI. */
export function skipOrFail(ctx, missing) {
  if (strict()) throw missingError(missing);
  console.error(`*** SKIPPING: ${missing} ***`);
  return ctx.skip(missing);
}

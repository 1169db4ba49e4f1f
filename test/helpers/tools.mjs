// The tools the editor and Matrix suites need (installed by .ci/setup-tools.sh before npm test), and
// it()/describe() that skip loudly without them — or fail, under CI=true (see skip.mjs).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CODE_SERVER_VERSION, vscodeServerAvailable } from '../vscode/harness.mjs';
import { synapseAvailable, synapseVenvDir } from '../matrix/synapse.mjs';
import { announce, missingError, strict, toolsRoot } from './skip.mjs';

export { strict, skipOrFail, whyMissing, announce } from './skip.mjs';
import { whyMissing } from './skip.mjs';

/** undefined when the VS Code server and Chromium are installed, else why not. */
export function vscodeMissing() {
  return vscodeServerAvailable()
    ? undefined
    : whyMissing('setup-vscode', `the VS Code server (code-server ${CODE_SERVER_VERSION}) with Chromium`);
}

/** undefined when Synapse is installed, else why not. */
export function synapseMissing() {
  return synapseAvailable() ? undefined : whyMissing('setup-synapse', `Synapse at ${synapseVenvDir()}`);
}

export const CLAUDE_AGENT_SDK_VERSION = process.env.HANDOFF_CLAUDE_AGENT_SDK_VERSION || '0.3.336';

/** The folder VS Code's Agent Host loads the Claude Agent SDK from (VSCODE_AGENT_HOST_CLAUDE_SDK_ROOT). */
export function claudeAgentSdkRoot() {
  return path.join(toolsRoot(), `claude-agent-sdk-${CLAUDE_AGENT_SDK_VERSION}`);
}

/** undefined when the VS Code server and the Claude Agent SDK (.ci/setup-agent-host.sh) are installed, else why not. */
export function agentHostMissing() {
  return (
    vscodeMissing() ??
    (existsSync(path.join(claudeAgentSdkRoot(), '.handoff-ok'))
      ? undefined
      : whyMissing('setup-agent-host', `the Claude Agent SDK ${CLAUDE_AGENT_SDK_VERSION} at ${claudeAgentSdkRoot()}`))
  );
}

/** undefined when the Claude Code CLI (a devDependency) is in node_modules/.bin, else why not. */
export function claudeMissing(root) {
  const bin = path.join(root, 'node_modules', '.bin', 'claude');
  return existsSync(bin)
    ? undefined
    : `the Claude Code CLI is not installed at ${bin} (a devDependency: run \`npm install\`)`;
}

/** The first reason among several, or undefined. */
export function firstMissing(...reasons) {
  return reasons.find(Boolean);
}

/** it() when nothing is missing; otherwise a loud skip, or under CI=true a test that fails with the reason. */
export function itNeeds(missing, name, options, fn) {
  if (!missing) return it(name, options, fn);
  if (strict())
    return it(name, options, () => {
      throw missingError(missing);
    });
  return it(name, { ...options, skip: missing }, fn);
}

/** describe() when nothing is missing; otherwise one test that skips loudly (or fails under CI=true). */
export function describeNeeds(missing, name, body) {
  if (!missing) return describe(name, body);
  announce(name, missing);
  return describe(name, () => itNeeds(missing, `needs: ${missing}`, {}, () => undefined));
}

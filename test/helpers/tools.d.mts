// Types for tools.mjs.
import type { TestContext } from 'node:test';
export { strict, skipOrFail, whyMissing, announce } from './skip.mjs';
type TestFn = (t: TestContext) => unknown;
export function vscodeMissing(): string | undefined;
export function synapseMissing(): string | undefined;
export const CLAUDE_AGENT_SDK_VERSION: string;
export function claudeAgentSdkRoot(): string;
export function agentHostMissing(): string | undefined;
export function claudeMissing(root: string): string | undefined;
export function firstMissing(...reasons: Array<string | undefined>): string | undefined;
export function itNeeds(missing: string | undefined, name: string, options: { timeout?: number }, fn: TestFn): unknown;
export function describeNeeds(missing: string | undefined, name: string, body: () => void): unknown;

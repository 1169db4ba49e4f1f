// Types for skip.mjs (plain JS so mocha suites and .mjs scripts share it).
export function strict(): boolean;
export function toolsRoot(): string;
export function whyMissing(setup: 'setup-vscode' | 'setup-synapse' | string, what: string): string;
export function announce(suite: string, missing: string | undefined): void;
export function missingError(missing: string): Error;
export function skipOrFail(ctx: { skip(message?: string): unknown }, missing: string): void;

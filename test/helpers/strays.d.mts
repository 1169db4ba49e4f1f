// Types for strays.mjs (plain JS so the VS Code harness and the TypeScript suites share it).
export function killStrays(...dirs: string[]): number;
